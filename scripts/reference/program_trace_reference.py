#!/usr/bin/env python3
"""The ops a program trace's leaves must equal, from real PyTorch: the MLP experiment's loss recorded under a
TorchDispatchMode, then torch.autograd.grad(loss, params, ones_like(loss)) under the same mode (the
backward a strata backward trace records: no AccumulateGrad, the cotangent made beforehand). With
`wrapped`, every input is a LoggingTensor-style wrapper that unwraps, runs the op and rewraps, and the
mode records only the ops run on plain tensors (the unrolled dispatch). tests/tracer/test_program_trace.cpp
reads the output, tests/golden/program_trace_torch.json. Only op names are compared, so the model's
initialisation does not matter.

Run with Debian's python3-torch:
  /usr/bin/python3 scripts/reference/program_trace_reference.py > tests/golden/program_trace_torch.json
"""
import json
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map


class Wrapper(torch.Tensor):
    @staticmethod
    def __new__(cls, elem, requires_grad=False):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                device=elem.device, requires_grad=requires_grad)
        r.elem = elem
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t.elem if isinstance(t, Wrapper) else t
        wrap = lambda t: Wrapper(t) if isinstance(t, torch.Tensor) and not isinstance(t, Wrapper) else t
        return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))


class Recorder(TorchDispatchMode):
    def __init__(self, plain_only):
        super().__init__()
        self.ops, self.plain_only = [], plain_only

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.plain_only and types:
            return NotImplemented  # let the wrapper run; its inner ops come back here
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def record(sizes, batch, wrapped):
    torch.manual_seed(0)
    params = []
    for i in range(len(sizes) - 1):
        params += [torch.randn(sizes[i + 1], sizes[i], requires_grad=True), torch.randn(sizes[i + 1], requires_grad=True)]
    x, y = torch.randn(batch, sizes[0]), torch.randint(0, sizes[-1], (batch,))
    if wrapped:
        params = [Wrapper(p.detach(), requires_grad=True) for p in params]
        x, y = Wrapper(x), Wrapper(y)
    mode = Recorder(plain_only=wrapped)
    with mode:
        h = x
        for i in range(len(sizes) - 1):
            h = F.linear(h, params[2 * i], params[2 * i + 1])
            if i + 2 < len(sizes):
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
    forward = mode.ops
    cotangent = torch.ones_like(loss)
    mode = Recorder(plain_only=wrapped)
    with mode:
        torch.autograd.grad(loss, params, cotangent)
    # 1.13's _make_grads compares the cotangent's size with aten.is_same_size; 2.8's compares sizes
    # without an op (sym_eq), so its backward starts at the loss's node.
    backward = [op for op in mode.ops if op != "aten.is_same_size.default"]
    return {"sizes": sizes, "batch": batch, "wrapped": wrapped, "forward_seq": forward, "backward_seq": backward}


print(json.dumps([record(s, b, w) for s, b in (([16, 32, 4], 8), ([8, 16, 16, 3], 5)) for w in (False, True)], indent=1))
