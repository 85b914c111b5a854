#!/usr/bin/env python3
"""torch.matmul and torch.flatten, the composites, for tests/golden/matmul_sequences_torch.json.

Each case makes its operands (values ((3 * i) % 7 - 3) / 2 over the operand's elements, laid out as
the case says), runs the composite under a TorchDispatchMode that logs every op (as
backward_order_reference.py does), then the backward of sum(output * w), w = arange(1, numel + 1),
under another, and records the ops of both phases, the output's sizes, strides and values, and each
operand's gradient. The cases cover PyTorch's _matmul_impl branches: 2-D products, the fold into one mm
(of the first operand, or of the transposed second), and the broadcast bmm (a vector second operand
included), with and without operands that require grad; the vector products (dot, mv, and mv on a
folded batch, the vector first or second); and flatten's view and copy.

PyTorch 1.13's reshape of a viewable tensor dispatches _reshape_alias where 2.8's dispatches view,
which is replaced here (as op_records_reference.py does). Where 1.13's _matmul_impl takes another
branch than 2.8's, the values and gradients are 1.13's (the same products) and the forward sequence
is 2.8's, read from its source (SEQUENCES_28, each with the reason); their backward is not compared,
unless the difference is outside the autograd graph (BACKWARD_AS_IN_113).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/matmul_sequences_reference.py > tests/golden/matmul_sequences_torch.json
"""
import json
import sys

import torch

from backward_order_reference import OpLog

AS_IN_28 = {"aten._reshape_alias.default": "aten.view.default"}


def operand(shape, layout, grad):
    """shape's values; layout "t": made with the last two dims swapped, then transposed back
    (a column-major batch); "step": made with its last dim twice as long, every other element kept."""
    made = list(shape)
    if layout == "t":
        made[-1], made[-2] = made[-2], made[-1]
    if layout == "step":
        made[-1] *= 2
    n = 1
    for s in made:
        n *= s
    t = torch.tensor([((3 * i) % 7 - 3) / 2 for i in range(n)], dtype=torch.float32).reshape(made)
    if layout == "t":
        t = t.transpose(-2, -1)
    if layout == "step":
        t = t[..., ::2]
    return t.detach().requires_grad_(grad)


# name: (op, [(shape, layout, requires_grad)], extra arguments)
CASES = {
    "mm_2d": ("matmul", [([3, 4], "", True), ([4, 5], "", True)], []),
    "vector_matrix": ("matmul", [([4], "", True), ([4, 5], "", True)], []),
    "batched_3d": ("matmul", [([2, 3, 4], "", True), ([2, 4, 5], "", True)], []),
    "batched_broadcast_4d": ("matmul", [([2, 1, 3, 4], "", True), ([3, 4, 2], "", True)], []),
    "batched_transposed": ("matmul", [([2, 3, 4], "t", True), ([2, 4, 5], "t", False)], []),
    "fold_contiguous": ("matmul", [([2, 3, 4], "", False), ([4, 5], "", False)], []),
    "fold_small_requires_grad": ("matmul", [([2, 3, 4], "step", False), ([4, 5], "", True)], []),
    "no_fold_strided": ("matmul", [([2, 3, 4], "t", False), ([4, 5], "", False)], []),
    "fold_transposed_second": ("matmul", [([3, 4], "", True), ([2, 4, 5], "", False)], []),
    "matrix_times_batch": ("matmul", [([3, 4], "", False), ([2, 4, 5], "", False)], []),
    "batch_of_one_requires_grad": ("matmul", [([1, 3, 4], "", True), ([2, 4, 5], "", True)], []),
    "batch_of_one_broadcast": ("matmul", [([1, 3, 4], "", False), ([2, 4, 5], "", False)], []),
    "batch_times_vector": ("matmul", [([2, 3, 4], "t", False), ([4], "", False)], []),
    "dot": ("matmul", [([4], "", True), ([4], "", True)], []),
    "dot_strided": ("matmul", [([3], "step", True), ([3], "", False)], []),
    "matrix_vector": ("matmul", [([3, 4], "", True), ([4], "", True)], []),
    "matrix_vector_transposed": ("matmul", [([3, 4], "t", True), ([4], "", True)], []),
    "fold_batch_vector": ("matmul", [([2, 3, 4], "", False), ([4], "", False)], []),
    "fold_batch_vector_requires_grad": ("matmul", [([2, 3, 4], "", True), ([4], "", True)], []),
    "vector_times_batch": ("matmul", [([4], "", False), ([2, 4, 5], "", False)], []),
    "vector_requires_grad_times_batch": ("matmul", [([4], "", True), ([2, 4, 5], "", False)], []),
    "vector_times_batch_4d": ("matmul", [([4], "", True), ([2, 1, 4, 3], "", True)], []),
    "batch_4d_times_vector_strided": ("matmul", [([2, 2, 3, 4], "t", True), ([4], "", True)], []),
    "flatten_all": ("flatten", [([2, 3, 4], "", True)], []),
    "flatten_middle": ("flatten", [([2, 3, 4, 2], "", True)], [1, 2]),
    "flatten_transposed_copy": ("flatten", [([2, 3, 4], "t", True)], [1]),
    "flatten_same_dim": ("flatten", [([2, 3], "", True)], [1, 1]),
    "flatten_scalar": ("flatten", [([], "", True)], []),
    "flatten_empty": ("flatten", [([2, 0, 3], "", True)], [0, 1]),
}


# 2.8's forward where 1.13's differs (aten/src/ATen/native/LinearAlgebra.cpp, _matmul_impl).
SEQUENCES_28 = {
    "fold_transposed_second": (
        "2.8's should_fold takes tensor2.mT() (a transpose) before deciding; then the fold transposes again",
        ["aten.transpose.int", "aten.transpose.int", "aten.t.default", "aten.clone.default", "aten._unsafe_view.default",
         "aten.mm.default", "aten._unsafe_view.default", "aten.transpose.int", "aten.clone.default"]),
    "matrix_times_batch": (
        "2.8 folds a 2-D @ 3-D product only when the matrix requires grad (should_fold); 1.13 folded it anyway. "
        "Here it takes the bmm branch, after should_fold's transpose of tensor2",
        ["aten.transpose.int", "aten.expand.default", "aten.view.default", "aten.expand.default", "aten.view.default",
         "aten.bmm.default", "aten._unsafe_view.default"]),
    "batch_of_one_requires_grad": (
        "2.8 squeezes a batch of one that requires grad and folds the 2-D @ 3-D product; 1.13 broadcasts it",
        ["aten.squeeze.dim", "aten.transpose.int", "aten.transpose.int", "aten.t.default", "aten.clone.default",
         "aten._unsafe_view.default", "aten.mm.default", "aten._unsafe_view.default", "aten.transpose.int",
         "aten.clone.default"]),
    "batch_of_one_broadcast": (
        "2.8 squeezes a batch of one that requires grad or is subclass-like, which every tensor is while a dispatch "
        "mode is on (isTensorSubclassLike); the 2-D @ 3-D product then takes the bmm branch (the matrix needs no grad)",
        ["aten.squeeze.dim", "aten.transpose.int", "aten.expand.default", "aten.view.default", "aten.expand.default",
         "aten.view.default", "aten.bmm.default", "aten._unsafe_view.default"]),
    "batch_times_vector": (
        "2.8 folds only a tensor whose batch dims view as rows (should_fold); this one takes the bmm branch, where "
        "1.13 copied it for mv",
        ["aten.expand.default", "aten.view.default", "aten.expand.default", "aten.view.default", "aten.unsqueeze.default",
         "aten.bmm.default", "aten.squeeze.dim", "aten._unsafe_view.default"]),
    "vector_times_batch": (
        "2.8's should_fold transposes tensor2 to decide, and folds a 1-D @ N-D product only when the vector requires "
        "grad or the transposed batch views as rows; this one takes the bmm branch, the vector expanded to [2, 1, 4]. "
        "1.13 transposed and copied the batch for mv",
        ["aten.transpose.int", "aten.expand.default", "aten.view.default", "aten.expand.default", "aten.view.default",
         "aten.bmm.default", "aten._unsafe_view.default"]),
    "vector_requires_grad_times_batch": (
        "2.8's should_fold takes tensor2.mT() (a transpose) before deciding, then the fold transposes again; "
        "1.13 transposed once. The graph, and so the backward, is the same",
        ["aten.transpose.int", "aten.transpose.int", "aten.clone.default", "aten._unsafe_view.default",
         "aten.mv.default", "aten._unsafe_view.default"]),
    "vector_times_batch_4d": (
        "2.8's should_fold takes tensor2.mT() (a transpose) before deciding, then the fold transposes again; "
        "1.13 transposed once. The graph, and so the backward, is the same",
        ["aten.transpose.int", "aten.transpose.int", "aten.clone.default", "aten._unsafe_view.default",
         "aten.mv.default", "aten._unsafe_view.default"]),
    "vector_matrix": (
        "PyTorch squeezes the product in place (squeeze_), an op strata does not have: strata's squeeze is the out-of-place "
        "view",
        ["aten.unsqueeze.default", "aten.mm.default", "aten.squeeze.dim"]),
}


# Cases whose 2.8 forward differs from 1.13's only in ops outside the graph: their backward is compared.
BACKWARD_AS_IN_113 = {"vector_matrix", "vector_requires_grad_times_batch", "vector_times_batch_4d"}


def logged(fn):
    log = OpLog()
    with log:
        out = fn()
    return out, [AS_IN_28.get(op, op) for op in log.ops]


def run(name, op, specs, extra):
    xs = [operand(*spec) for spec in specs]
    fn = getattr(torch, op)
    y, forward_ops = logged(lambda: fn(*xs, *extra))
    if name in SEQUENCES_28:
        forward_ops = SEQUENCES_28[name][1]
    case = {"op": op, "operands": [{"shape": sh, "layout": lay, "grad": g} for sh, lay, g in specs], "extra": extra,
            "forward": forward_ops, "sizes": list(y.shape), "strides": list(y.stride()),
            "values": y.detach().flatten().tolist()}
    if name in SEQUENCES_28:
        case["forward_in_28"] = SEQUENCES_28[name][0]
    if y.requires_grad:
        loss = (y * torch.arange(1.0, y.numel() + 1).reshape(y.shape)).sum()
        _, backward_ops = logged(loss.backward)
        if name not in SEQUENCES_28 or name in BACKWARD_AS_IN_113:
            case["backward"] = backward_ops
        case["grads"] = [x.grad.flatten().tolist() if x.grad is not None else None for x in xs]
    return case


def main():
    out = {"reference": "PyTorch " + torch.__version__, "cases": {}}
    for name, (op, specs, extra) in CASES.items():
        out["cases"][name] = run(name, op, specs, extra)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
