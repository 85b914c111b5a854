#!/usr/bin/env python3
"""split, split_with_sizes and chunk from real PyTorch: tests/golden/split_views_torch.json, which
tests/autograd/test_split_views.cpp reads.

Records the pieces' shapes, the ops a TorchDispatchMode sees for each call and for its backward,
the gradients, and the errors of in-place ops on pieces (PyTorch's CreationMeta::MULTI_OUTPUT_NODE).

Run with Debian's python3-torch:
  /usr/bin/python3 scripts/reference/split_views_reference.py > tests/golden/split_views_torch.json
"""
import json

import torch

from backward_order_reference import OpLog  # this script's folder is on sys.path


def error_of(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


def calls():
    """Each call on x = arange(30).view(5, 6) as float: its pieces' shapes and the ops a mode sees."""
    x = torch.arange(30, dtype=torch.float32).view(5, 6)
    cases = {
        "chunk_3_1": lambda: x.chunk(3, 1),
        "chunk_4_0": lambda: x.chunk(4, 0),
        "chunk_6_of_4": lambda: torch.arange(4.0).chunk(6),
        "chunk_empty": lambda: torch.empty(0, 2).chunk(3),
        "split_2": lambda: x.split(2),
        "split_sizes": lambda: x.split([1, 0, 5], -1),
        "split_with_sizes": lambda: x.split_with_sizes([2, 3]),
    }
    out = {}
    for name, fn in cases.items():
        log = OpLog()
        with log:
            pieces = fn()
        out[name] = {"shapes": [list(p.shape) for p in pieces], "ops": log.ops}
    return out


def backward_of_some_pieces():
    """x (5x3) requires grad; a, b, c = x.chunk(3): a.sum() + (c * 2).sum(); b gets no gradient."""
    x = torch.arange(15, dtype=torch.float32).view(5, 3).requires_grad_()
    a, b, c = x.chunk(3)
    loss = a.sum() + (c * 2).sum()
    log = OpLog()
    with log:
        loss.backward()
    return {"grad_fn": type(a.grad_fn).__name__, "same_node": a.grad_fn is b.grad_fn and b.grad_fn is c.grad_fn,
            "backward": log.ops, "grad": x.grad.flatten().tolist()}


def inplace_errors():
    x = torch.arange(4, dtype=torch.float32).requires_grad_()
    y = x * 1
    pieces = y.split(2)
    direct = error_of(lambda: pieces[1].mul_(2))
    y.mul_(2)
    indirect = error_of(lambda: pieces[0].sum())
    z = torch.arange(4, dtype=torch.float32)
    plain = z.split([3, 1])
    plain_written_with_grad = error_of(lambda: plain[0].mul_(x[0]))
    plain[1].mul_(10)  # nothing requires grad: the write goes through to z
    return {"direct": direct, "indirect": indirect, "plain_written_with_grad": plain_written_with_grad,
            "plain_written": z.tolist()}


def main():
    print(json.dumps({"calls": calls(), "backward_of_some_pieces": backward_of_some_pieces(),
                      "inplace_errors": inplace_errors()}, indent=1))


if __name__ == "__main__":
    main()
