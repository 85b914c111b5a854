#!/usr/bin/env python3
"""The calls a TorchFunctionMode sees in PyTorch, for tests/golden/function_modes_torch.json.

"seed_step": the MLP experiment's step (scripts/reference/dispatch_tracer.py, sizes 16-32-4, batch 8,
seed 0) with the mode entered after the model, batch and SGD are made, as its traced_step enters its
OpCounter: every call with its phase, PyTorch's name (torch.overrides.resolve_name, except torch.mm,
which 1.13 resolves to its alias torch.spmm), the name upstream DebugMode prints, and its positional
and keyword arguments as DebugMode's shorthand writes them ("t: f32[8, 16]", Python reprs).
"construction": the calls seen while the same model, batch and SGD are made (names only).
"nested": two modes, an outer one logging and calling through, an inner one logging, calling
torch.add itself (which only the outer mode sees) and then calling through, around F.linear,
torch.t and torch.mm: the order of their log entries.
"methods": Tensor methods, operators and torch functions under a recording mode (names, upstream
DebugMode's names, arguments): a method call is announced as the method (`x.sum()` as torch.Tensor.sum,
printed `<method 'sum' of 'torch._C.TensorBase' objects>`), an operator as the method it calls
(`x + y` as torch.Tensor.add, `z -= y` as torch.Tensor.sub_; `1.0 - x` and `2.0 / x` as
torch.Tensor.__rsub__ and __rtruediv__, Python functions of torch._tensor), a torch function as itself, and
arguments left at their defaults are not passed.
"module_hooks": global forward pre- and post-hooks (register_module_forward_pre_hook,
register_module_forward_hook) on a nested Sequential, with upstream ModTracker's names.

Each call carries "strata": false and a reason when strata announces nothing for it: tensor
property reads and metadata queries (strata's accessors are member functions, not front-end
functions) and Optimizer.step's record_function scope, which PyTorch 1.13 makes with torch.zeros and
profiler._record_function_enter (2.8: torch.ops.profiler._record_function_enter_new and
torch._C._set_grad_enabled also reach the mode, and the SGD step reads Tensor.device; strata
announces none of these). The test compares the others, in order, with strata's log.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/function_mode_reference.py
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode, resolve_name

from dispatch_tracer import step_in_phases  # this script's folder is on sys.path

ABBR = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "b8", torch.uint8: "u8"}


def name_of(func):
    if func is torch.mm:
        return "torch.mm"
    return resolve_name(func) or f"{getattr(func, '__module__', '?')}.{getattr(func, '__name__', func)}"


def repr_name_of(func):
    # upstream DebugMode's _get_op_name (2.8 prints TensorBase where 1.13 has _TensorBase)
    if hasattr(func, "__module__") and hasattr(func, "__name__"):
        return f"{func.__module__}.{func.__name__}"
    return str(func).replace("torch._C._TensorBase", "torch._C.TensorBase")


def render(x):
    if isinstance(x, torch.Tensor):
        return f"t: {ABBR[x.dtype]}[{', '.join(str(s) for s in x.shape)}]"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(render(v) for v in x) + "]"
    return repr(x)


def reason(phase, name):
    if name.endswith(".__get__"):
        return "a Tensor property read: strata's accessors are member functions"
    if name in ("torch.Tensor.dim", "torch.Tensor.size"):
        return "a metadata query: strata's are member functions"
    if name.startswith("profiler.") or (phase == "optimizer" and name == "torch.zeros"):
        return "Optimizer.step's record_function scope: strata enters it at the dispatcher only"
    return None


class Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.phase = None
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = name_of(func)
        why = reason(self.phase, name)
        entry = {"phase": self.phase, "name": name, "strata": why is None}
        if why:
            entry["reason"] = why
        else:
            entry.update(repr_name=repr_name_of(func), args=[render(a) for a in args],
                         kwargs={k: render(v) for k, v in kwargs.items()})
        self.calls.append(entry)
        return func(*args, **kwargs)


def make_all(seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(8, 16, generator=g)
    y = torch.randint(0, 4, (8,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, x, y, opt


def seed_step():
    rec = Recorder()
    step_in_phases(rec, *make_all(0))
    return rec.calls


def construction():
    rec = Recorder()
    with rec:
        rec.phase = "construction"
        make_all(0)
    return [{k: c[k] for k in ("name", "strata", "reason") if k in c} for c in rec.calls]


class Logger(TorchFunctionMode):
    def __init__(self, tag, log, extra=False):
        super().__init__()
        self.tag, self.log, self.extra = tag, log, extra

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append(f"{self.tag} enter {name_of(func)}")
        if self.extra:
            torch.add(args[0], 1)
        out = func(*args, **(kwargs or {}))
        self.log.append(f"{self.tag} exit {name_of(func)}")
        return out


def nested():
    log = []
    x, w, b = torch.ones(2, 3), torch.ones(4, 3), torch.ones(4)
    with Logger("outer", log):
        with Logger("inner", log, extra=True):
            F.linear(x, w, b)
            torch.mm(x, torch.t(w))
    return log


def module_hooks():
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    model = nn.Sequential(nn.Linear(4, 3), nn.Sequential(nn.Linear(3, 3), nn.ReLU()), nn.Linear(3, 2))
    # upstream ModTracker's names for a root first seen as `model`
    names = {m: "Sequential" + ("." + n if n else "") for n, m in model.named_modules()}
    log = []
    pre = register_module_forward_pre_hook(lambda m, i: log.append(f"pre {names[m]}"))
    post = register_module_forward_hook(lambda m, i, o: log.append(f"post {names[m]} {list(o.shape)}"))
    model(torch.ones(5, 4))
    pre.remove()
    post.remove()
    model(torch.ones(5, 4))  # removed: logs nothing
    return log


def methods():
    rec = Recorder()
    rec.phase = "methods"
    x, y, w, z = torch.ones(2, 3), torch.full((2, 3), 2.0), torch.ones(3, 4), torch.zeros(2, 3)
    with rec:
        x.sum()
        x.sum([1], True)
        torch.sum(x)
        x + y
        x - y
        x * y
        x / y
        -x
        x + 1
        2.0 * x
        x / 2.0
        1.0 - x
        2.0 / x
        x.add(y)
        x.add(y, alpha=2)
        torch.add(x, y)
        x.mm(w)
        torch.mm(x, w)
        x.t()
        x.transpose(0, 1)
        x.unsqueeze(0)
        x.view([6])
        x.reshape([3, 2])
        x.clone()
        x.detach()
        torch.detach(x)
        x.exp()
        x.relu()
        x.neg()
        x.mean()
        x.softmax(1)
        x.max()
        x.max(1)
        x.argmax()
        z += y
        z -= y
        z *= y
        z *= 2.0
        z.add_(y)
        z.mul_(y)
        z.zero_()
        z.fill_(1.0)
        z.copy_(y)
    return [{k: c[k] for k in ("name", "repr_name", "args", "kwargs")} for c in rec.calls]


def main():
    out = {"torch_version": torch.__version__, "seed_step": seed_step(), "construction": construction(),
           "nested": nested(), "methods": methods(), "module_hooks": module_hooks()}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
