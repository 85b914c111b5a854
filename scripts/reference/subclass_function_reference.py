#!/usr/bin/env python3
"""What a tensor subclass's __torch_function__ sees in PyTorch, for tests/golden/subclass_function_torch.json.

"program": a LoggingTensor-like wrapper subclass that logs "function <name>" in its __torch_function__
(then calls through with torch._C.DisableTorchFunction, 1.13's name for 2.8's
DisableTorchFunctionSubclass) and "dispatch <op>" in its __torch_dispatch__ (unwrap, run, rewrap),
over a small program: F.linear, torch.relu, torch.sum, torch.t, torch.mm, torch.add with alpha,
Tensor.add_, Tensor.detach, an op on plain tensors only and one with the subclass second. Names are
torch.overrides.resolve_name's, except torch.mm, which 1.13 resolves to its alias torch.spmm.
"mode_then_subclass": the same subclass under a TorchFunctionMode that logs and calls through: the
mode sees the call first, its call through reaches the subclass.
"priority*": two plain subclasses A and B(A) whose __torch_function__ logs "<Type> <name>" and
returns NotImplemented when its type is in a decline set, called as torch.add(a, b): the derived B
goes first, a NotImplemented passes to the next, all NotImplemented is a TypeError.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/subclass_function_reference.py
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._pytree import tree_map


def name_of(func):
    return "torch.mm" if func is torch.mm else resolve_name(func)


class LoggingTensor(torch.Tensor):
    log = []

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype)
        r.elem = elem
        return r

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LoggingTensor.log.append(f"function {name_of(func)}")
        with torch._C.DisableTorchFunction():
            return func(*args, **(kwargs or {}))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        LoggingTensor.log.append(f"dispatch {func}")
        unwrap = lambda e: e.elem if isinstance(e, LoggingTensor) else e
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(lambda e: cls(e) if isinstance(e, torch.Tensor) else e, out)


def program():
    LoggingTensor.log = []
    x = LoggingTensor(torch.ones(2, 3))
    w = LoggingTensor(torch.ones(4, 3))
    b = LoggingTensor(torch.ones(4))
    y = F.linear(x, w, b)
    z = torch.relu(y)
    torch.sum(z)
    m = torch.mm(x, torch.t(w))
    a = torch.add(m, m, alpha=2)
    a.add_(y)
    a.detach()
    torch.mul(torch.ones(2), torch.ones(2))
    out = torch.add(torch.ones(4), b)
    return {"log": list(LoggingTensor.log), "add_result": type(out).__name__, "add_value": out.elem.tolist()}


class Mode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        LoggingTensor.log.append(f"mode {name_of(func)}")
        return func(*args, **(kwargs or {}))


def mode_then_subclass():
    LoggingTensor.log = []
    x = LoggingTensor(torch.ones(2, 3))
    w = LoggingTensor(torch.ones(3, 4))
    with Mode():
        torch.mm(x, w)
    return list(LoggingTensor.log)


class A(torch.Tensor):
    log = []
    decline = set()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        A.log.append(f"{cls.__name__} {name_of(func)}")
        if cls.__name__ in A.decline:
            return NotImplemented
        with torch._C.DisableTorchFunction():
            return func(*args, **(kwargs or {}))


class B(A):
    pass


def priority(decline):
    A.log, A.decline = [], set(decline)
    a, b = torch.ones(2).as_subclass(A), torch.ones(2).as_subclass(B)
    try:
        result = type(torch.add(a, b)).__name__
    except TypeError as e:
        result = "TypeError: " + str(e).split(" on types")[0]
    A.decline = set()
    return {"log": list(A.log), "result": result}


def main():
    out = {
        "reference": "PyTorch " + torch.__version__,
        "program": program(),
        "mode_then_subclass": mode_then_subclass(),
        "priority": priority([]),
        "priority_b_declines": priority(["B"]),
        "priority_all_decline": priority(["A", "B"]),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
