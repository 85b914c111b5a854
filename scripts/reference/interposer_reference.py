#!/usr/bin/env python3
"""Interposer sequences from real PyTorch, for tests/golden/interposer_torch.json.

Each case logs what dispatch modes and wrapper subclasses see for a small program, as the cases of
PyTorch's test/test_python_dispatch.py do: the detach a handler's own detach call adds under nested
modes, the detach of factory outputs a mode keeps (make_variable), subclass priority and
NotImplemented, a handler's None, and wrapper version counters (a view's shared with its base). Only cases where 1.13 agrees with
2.8 are kept (AccumulateGrad's tail differs between them and is not here).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/interposer_reference.py
"""
import json
import sys

import torch
from torch.utils._pytree import tree_map
from torch.utils._python_dispatch import TorchDispatchMode


class EnterExit(TorchDispatchMode):
    """Logs '<name> enter <op>' and '<name> exit <op>' into a shared list."""

    def __init__(self, name, log):
        super().__init__()
        self.name, self.log = name, log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(f"{self.name} enter {func}")
        out = func(*args, **(kwargs or {}))
        self.log.append(f"{self.name} exit {func}")
        return out


class OpLog(TorchDispatchMode):
    """Logs op names; with keep=True it also keeps every output alive."""

    def __init__(self, keep=False):
        super().__init__()
        self.ops, self.kept, self.keep = [], [], keep

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        out = func(*args, **(kwargs or {}))
        if self.keep:
            self.kept.append(out)
        return out


class Wrapper(torch.Tensor):
    """A LoggingTensor-like wrapper subclass: unwrap, run, log '<Type> <op>', rewrap."""

    __torch_function__ = torch._C._disabled_torch_function_impl
    log = []
    decline = set()

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                requires_grad=elem.requires_grad)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        Wrapper.log.append(f"{cls.__name__} {func}")
        if cls.__name__ in Wrapper.decline:
            return NotImplemented
        unwrap = lambda e: e.elem if isinstance(e, Wrapper) else e
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(lambda e: cls(e) if isinstance(e, torch.Tensor) else e, out)


class A(Wrapper):
    pass


class B(A):
    pass


class Declining(TorchDispatchMode):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(f"mode {func}")
        return NotImplemented


def nested_modes_detach():
    log = []
    x = torch.randn(2)
    with EnterExit("outer", log):
        with EnterExit("inner", log):
            x.detach()
    return log


def wrapper_detach_in_mode():
    Wrapper.log = []
    x = Wrapper(torch.randn(2))
    mode = OpLog()
    with mode:
        x.detach()
    return {"mode": mode.ops, "subclass": list(Wrapper.log)}


def factories(keep):
    x = torch.randn(2)
    mode = OpLog(keep)
    with mode:
        torch.ones_like(x)
        torch.empty(2)
    return mode.ops


def backward_implicit_ones_like(keep):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    mode = OpLog(keep)
    with mode:
        loss.backward()
    return mode.ops[:3]  # AccumulateGrad's tail differs between 1.13 and 2.8


def priority(decline):
    Wrapper.log, Wrapper.decline = [], set(decline)
    a, b = A(torch.ones(2)), B(torch.ones(2))
    try:
        out = type(torch.add(a, b)).__name__
    except TypeError:
        out = "TypeError"
    Wrapper.decline = set()
    return {"log": list(Wrapper.log), "result": out}


def declining_mode():
    Wrapper.log = []
    log = []
    a, b = A(torch.ones(2)), B(torch.ones(2))
    with Declining(log):
        try:
            out = type(torch.add(a, b)).__name__
        except TypeError:
            out = "TypeError"
    return {"mode": log, "subclass": list(Wrapper.log), "result": out}


class NoneOnAdd(Wrapper):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_dispatch__.__func__(cls, func, types, args, kwargs)
        return None if func.overloadpacket.__name__ == "add" else out


def none_wrapping():
    x = NoneOnAdd(torch.rand(2))
    return {"mul": type(x * 2).__name__, "add": repr(x + 2)}


class NoneFor(TorchDispatchMode):
    """Calls through, logs the op, and returns None for the ops named in `ops`."""

    def __init__(self, ops):
        super().__init__()
        self.ops, self.log = ops, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(str(func))
        out = func(*args, **(kwargs or {}))
        return None if func.overloadpacket.__name__ in self.ops else out


def none_recorded():
    """A handler's None where autograd records the op (VariableType's set_history of an undefined output)."""
    out = {}
    x = NoneOnAdd(torch.rand(2).requires_grad_())
    out["subclass_add"] = repr(x + x)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    mode = NoneFor({"mul", "view", "exp"})
    with mode:
        product = torch.mul(x, x)
        view = x.view(2, 1)
        exp = torch.exp(x)  # its node saves the None it returned
        kept = torch.neg(x)
    out["mul"], out["view"], out["exp"], out["log"] = repr(product), repr(view), repr(exp), mode.log
    kept.sum().backward()
    out["x_grad_after"] = x.grad.tolist()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 3
    ones = torch.ones(2)
    mode = NoneFor({"add_"})
    with mode:
        result = y.add_(ones)
    out["add_"] = {"result_is_self": result is y, "grad_fn": type(y.grad_fn).__name__, "value": y.tolist(),
                   "log": mode.log}
    y.sum().backward()
    out["add_"]["a_grad"] = a.grad.tolist()
    return out


def version():
    x = Wrapper(torch.randn(1))
    before = x._version
    x.detach().add_(2)
    after_detach = x._version
    x.data.add_(2)
    return {"before": before, "after_detach_add_": after_detach, "after_data_add_": x._version}


def view_version():
    """A recorded view of a wrapper counts its base's writes, so backward refuses what it saved."""
    a = Wrapper(torch.ones(3, 3, requires_grad=True))
    b = a.relu()
    v = b.t()
    m = v * v
    b.add_(m)
    try:
        m.sum().backward()
        error = ""
    except RuntimeError as e:
        error = str(e).split(" Hint:")[0]
    return {"view": v._version, "base": b._version, "error": error}


def main():
    out = {
        "reference": "PyTorch " + torch.__version__,
        "nested_modes_detach": nested_modes_detach(),
        "wrapper_detach_in_mode": wrapper_detach_in_mode(),
        "factories_kept": factories(True),
        "factories_dropped": factories(False),
        "backward_ones_like_kept": backward_implicit_ones_like(True),
        "backward_ones_like_dropped": backward_implicit_ones_like(False),
        "priority": priority([]),
        "priority_b_declines": priority(["B"]),
        "priority_all_decline": priority(["A", "B"]),
        "declining_mode": declining_mode(),
        "none_wrapping": none_wrapping(),
        "none_recorded": none_recorded(),
        "version": version(),
        "view_version": view_version(),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
