#!/usr/bin/env python3
"""torch.einsum, for tests/golden/einsum_torch.json.

Each case makes its operands (operand k's values ((3 * i + k) % 7 - 3) / 2 over its elements, float32),
runs torch.einsum under a TorchDispatchMode that logs every op (as backward_order_reference.py does),
then the backward of sum(output * w), w = arange(1, numel + 1), under another, and records the ops of
both phases, the output's sizes, strides and values, and each operand's gradient. The cases cover
matmul, batch matmul, outer products, diagonals and traces, ellipses (broadcast and summed), size-1
broadcasting, sums of a subscript one operand has, three operands (contracted left to right: there
is no opt_einsum here, as on a machine without it) and the implicit output. Then the errors: each
bad equation's message, as the C++ einsum words it (PyTorch's Python wrapper adds nothing to them).

PyTorch 1.13's einsum is 2.8's for these cases (aten/src/ATen/native/Linear.cpp: the same parsing,
the same left-to-right contraction and sumproduct_pair; 2.8 adds symbolic-size guards only, and
upstream's later swap of sumproduct_pair's operands came after 2.8). Its reshape of a viewable
tensor dispatches _reshape_alias where 2.8's dispatches view: replaced here, as
matmul_sequences_reference.py does.

Run with Debian's python3-torch, from scripts/reference/:
  /usr/bin/python3 einsum_reference.py > ../../tests/golden/einsum_torch.json
"""
import json
import sys

import torch

from backward_order_reference import OpLog

AS_IN_28 = {"aten._reshape_alias.default": "aten.view.default"}

# name: (equation, [(shape, requires_grad)])
CASES = {
    "matmul": ("ij,jk->ik", [([3, 4], True), ([4, 5], True)]),
    "matmul_implicit": ("ij,jk", [([3, 4], True), ([4, 5], True)]),
    "matmul_transposed_output": ("ij,jk->ki", [([3, 4], True), ([4, 5], True)]),
    "batch_matmul": ("bij,bjk->bik", [([2, 3, 4], True), ([2, 4, 5], True)]),
    "outer": ("i,j->ij", [([3], True), ([4], True)]),
    "dot": ("i,i->", [([5], True), ([5], True)]),
    "hadamard": ("ij,ij->ij", [([2, 3], True), ([2, 3], True)]),
    "diagonal": ("ii->i", [([3, 3], True)]),
    "trace": ("ii", [([3, 3], True)]),
    "batch_diagonal": ("bii->bi", [([2, 3, 3], True)]),
    "diagonal_times_vector": ("iij,j->i", [([3, 3, 2], True), ([2], True)]),
    "transpose": ("ij->ji", [([3, 4], True)]),
    "sum_all": ("ij->", [([3, 4], True)]),
    "sum_rows": ("ij->i", [([3, 4], True)]),
    "ellipsis_broadcast": ("...ij,...jk", [([2, 3, 4], True), ([4, 5], True)]),
    "ellipsis_batch": ("...ij,...jk->...ik", [([2, 1, 3, 4], True), ([3, 4, 2], True)]),
    "ellipsis_summed": ("...ij->j", [([2, 3, 4], True)]),
    "broadcast_size_one": ("ij,jk->ik", [([3, 1], True), ([4, 5], True)]),
    "summed_in_one_operand": ("ij,jk->i", [([3, 4], True), ([4, 5], True)]),
    "seed_bld_dnh": ("bld,dnh->blnh", [([16, 6, 8], True), ([8, 4, 4], True)]),
    "three_matmuls": ("ij,jk,kl->il", [([2, 3], True), ([3, 4], True), ([4, 5], True)]),
    "bilinear": ("bn,anm,bm->ba", [([2, 3], True), ([4, 3, 5], True), ([2, 5], False)]),
    "three_elementwise": ("i,i,i->i", [([4], True), ([4], False), ([4], True)]),
    "capitals_and_spaces": (" Ab , bC -> CA ", [([2, 3], True), ([3, 4], True)]),
    "no_grad": ("bij,bjk->bik", [([2, 3, 4], False), ([2, 4, 5], False)]),
}

# name: (equation, [shape])
ERRORS = {
    "no_operands": ("i", []),
    "fewer_operands": ("ij,jk->ik", [[2, 3]]),
    "more_operands": ("ij", [[2, 3], [3, 4]]),
    "invalid_subscript": ("i1", [[2, 3]]),
    "invalid_output_subscript": ("ij->i1", [[2, 3]]),
    "second_ellipsis": ("...i...", [[2, 3]]),
    "broken_ellipsis": ("i.j", [[2, 3]]),
    "second_output_ellipsis": ("...ij->......", [[2, 3]]),
    "broken_output_ellipsis": ("ij->i.", [[2, 3]]),
    "repeated_output": ("ij->ii", [[2, 3]]),
    "unknown_output": ("ij->k", [[2, 3]]),
    "too_many_subscripts": ("ijk", [[2, 3]]),
    "too_many_with_ellipsis": ("ijk...", [[2, 3]]),
    "too_few_subscripts": ("i", [[2, 3]]),
    "size_mismatch": ("ij,jk", [[2, 3], [4, 5]]),
    "repeated_size_mismatch": ("ii", [[2, 3]]),
    "ellipsis_mismatch": ("...i,...i", [[2, 3], [4, 3]]),
}


def operand(shape, k, grad):
    n = 1
    for s in shape:
        n *= s
    t = torch.tensor([((3 * i + k) % 7 - 3) / 2 for i in range(n)], dtype=torch.float32).reshape(shape)
    return t.requires_grad_(grad)


def logged(fn):
    log = OpLog()
    with log:
        out = fn()
    return out, [AS_IN_28.get(op, op) for op in log.ops]


def run(equation, specs):
    xs = [operand(shape, k, grad) for k, (shape, grad) in enumerate(specs)]
    y, forward_ops = logged(lambda: torch.einsum(equation, *xs))
    case = {"equation": equation, "operands": [{"shape": sh, "grad": g} for sh, g in specs], "forward": forward_ops,
            "sizes": list(y.shape), "strides": list(y.stride()), "values": y.detach().flatten().tolist()}
    if y.requires_grad:
        loss = (y * torch.arange(1.0, y.numel() + 1).reshape(y.shape)).sum()
        _, backward_ops = logged(loss.backward)
        case["backward"] = backward_ops
        case["grads"] = [x.grad.flatten().tolist() if x.grad is not None else None for x in xs]
    return case


def error(equation, shapes):
    xs = [operand(shape, k, False) for k, shape in enumerate(shapes)]
    try:
        torch._VF.einsum(equation, xs)
    except RuntimeError as e:
        return {"equation": equation, "shapes": shapes, "message": str(e).split("\n")[0]}
    raise SystemExit(f"einsum_reference.py: {equation} did not fail")


def main():
    out = {"reference": "PyTorch " + torch.__version__,
           "cases": {name: run(*case) for name, case in CASES.items()},
           "errors": {name: error(*e) for name, e in ERRORS.items()}}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
