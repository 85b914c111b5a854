#!/usr/bin/env python3
"""The tensor attributes a dispatch mode sees, for DebugMode's record_tensor_attributes
(tests/modes/test_debug_mode_options.cpp writes the expected lines from this output).

Upstream's DebugMode stringifies an op's arguments before running it and its outputs right after, in
__torch_dispatch__, below autograd: an output has no history yet (requires_grad=False, is_leaf=True)
and an in-place op's version bump (ADInplaceOrView, above the Python key) has not happened. PyTorch
1.13 has no DebugMode, so this reads the same attributes from a TorchDispatchMode at the same points.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/debug_mode_attributes_reference.py
Prints, per op: the op, (requires_grad, is_leaf, _version) of each tensor argument, then of the output:
  aten.t.default [(True, True, 0)] (False, True, 0)
  aten.addmm.default [(True, True, 0), (False, True, 0), (True, False, 0)] (False, True, 0)
  aten.ones.default [] (False, True, 0)
  aten.add_.Tensor [(True, False, 0), (False, True, 0)] (True, False, 0)
"""
import torch, torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
class M(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        ins = [(a.requires_grad, a.is_leaf, a._version) for a in args if isinstance(a, torch.Tensor)]
        out = func(*args, **(kwargs or {}))
        o = out if isinstance(out, torch.Tensor) else None
        print(func, ins, (o.requires_grad, o.is_leaf, o._version) if o is not None else None)
        return out
w = torch.ones(4, 3, requires_grad=True); b = torch.ones(4, requires_grad=True); x = torch.ones(2, 3)
with M():
    y = F.linear(x, w, b)
    y.add_(torch.ones(2, 4))
