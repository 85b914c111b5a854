#!/usr/bin/env python3
"""Backward op sequences from real PyTorch, for tests/golden/backward_order_torch.json.

Each case builds a small graph from leaves that require grad, then logs every op the backward of
sum(output) dispatches (a TorchDispatchMode, as in scripts/reference/dispatch_tracer.py). They pin the
order in which a node computes its input gradients (PyTorch's codegen emits them sorted by input
name), the scalar overloads of maybe_multiply, and out-of-place gradient accumulation under a mode.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/backward_order_reference.py
"""
import json
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def leaf(values, shape):
    return torch.tensor(values, dtype=torch.float32).reshape(shape).requires_grad_()


def cases():
    a = lambda: leaf([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3))
    b = lambda: leaf([2.0, 1.0, 4.0, 3.0, 6.0, 5.0], (2, 3))
    w = lambda: leaf([0.5, -1.0, 2.0, 1.5, 0.25, -0.5], (2, 3))
    return {
        "mm_self_and_transposed_mat2": lambda: (lambda x, m: torch.mm(x, m.t()))(a(), w()),
        "div": lambda: torch.div(a(), b()),
        "mul": lambda: torch.mul(a(), b()),
        "sub_alpha_2": lambda: torch.sub(a(), b(), alpha=2),
        "add_alpha_2_5": lambda: torch.add(a(), b(), alpha=2.5),
        "addmm_beta_2_alpha_3": lambda: torch.addmm(leaf([1.0, -1.0], (2,)), a(), w().t(), beta=2, alpha=3),
        "threshold_backward": lambda: torch.ops.aten.threshold_backward(a(), b(), 2.0),
        "same_leaf_twice": lambda: (lambda v: torch.mul(v, v))(a()),
    }


def main():
    out = {"reference": "PyTorch " + torch.__version__, "cases": {}}
    for name, build in cases().items():
        y = build()
        loss = y.sum()
        log = OpLog()
        with log:
            loss.backward()
        out["cases"][name] = log.ops
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
