#!/usr/bin/env python3
"""FlopCounterMode's per-module FLOPs, forward and backward, for tests/golden/flop_modules_torch.json.

PyTorch 2.8's FlopCounterMode attributes each mm/addmm to "Global" and to every module its module
tracker has open: a module is entered by a forward pre-hook and left by the forward hook; in the
backward it is entered when its output's gradient arrives (a multi-grad hook on the outputs) and left
when its input's gradient is computed (one on the inputs that require grad), or at the end of the
backward, when the tracker resets to {"Global"} (an engine callback). Debian's PyTorch 1.13 has no
FlopCounterMode, module tracker, register_multi_grad_hook or always_call module hooks, so this
script rebuilds that tracking, in its own words, from what 1.13 has: global module forward hooks,
Tensor.register_hook (each module here has one input and one output, so a multi-grad hook is one
tensor hook) and the engine's queue_callback. The hooks fire where 1.13's own engine fires them, and
the mm/addmm FLOPs (2*m*k*n, addmm counting its product only) are counted by a TorchDispatchMode, so the
numbers come from PyTorch's backward order, not from strata's.

Cases: the MLP step (16,32,4, batch 8: cross_entropy, backward, SGD step) and a nested model
Sequential(Sequential(Linear(6,8), ReLU), Linear(8,3)) on a batch of 5 that requires grad, loss sum().
Each gives {phase: {module: {op: flops}}}, the backward's module entries and exits in order ("> name" /
"< name" with the sorted parents after entering or before leaving), and the tables
flop_table_reference.table() prints.

Run:  /usr/bin/python3 scripts/reference/flop_modules_reference.py > tests/golden/flop_modules_torch.json
"""
import json
import os
import sys
from collections import defaultdict

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flop_table_reference import table  # noqa: E402


class Tracker:
    """The module hierarchy as upstream's tracker keeps it (a set of names plus "Global")."""

    def __init__(self):
        self.parents = {"Global"}
        self.names = {}
        self.seen = set()
        self.in_backward = False
        self.leave_at_end = []
        self.backward_log = []  # "> name" / "< name" with the parents after entering, before leaving

    def name(self, mod):
        if mod not in self.names:
            self.names[mod] = type(mod).__name__
        if mod not in self.seen:
            for child_name, child in mod.named_children():
                self.names[child] = self.names[mod] + "." + child_name
                self.name(child)
            self.seen.add(mod)
        return self.names[mod]

    def enter_backward(self, name):
        if not self.in_backward:
            self.in_backward = True
            for leave in reversed(self.leave_at_end):
                torch.autograd.Variable._execution_engine.queue_callback(leave)
            self.leave_at_end = []

            def reset():
                self.parents = {"Global"}
                self.in_backward = False

            torch.autograd.Variable._execution_engine.queue_callback(reset)
        self.parents.add(name)
        self.backward_log.append(f"> {name} {sorted(self.parents)}")

    def leave(self, name, backward=False):
        if backward:
            self.backward_log.append(f"< {name} {sorted(self.parents)}")
        self.parents.discard(name)

    def pre_forward(self, mod, inputs):
        name = self.name(mod)
        self.parents.add(name)
        (x,) = inputs
        if x.requires_grad:
            x.register_hook(lambda grad: self.leave(name, True))
        else:
            self.leave_at_end.append(lambda: self.leave(name, True))

    def post_forward(self, mod, inputs, output):
        name = self.name(mod)
        self.leave(name)
        if output.requires_grad:
            output.register_hook(lambda grad: self.enter_backward(name))


class Flops(TorchDispatchMode):
    def __init__(self, tracker):
        super().__init__()
        self.tracker = tracker
        self.phase = "forward"
        self.counts = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        packet = str(func.overloadpacket).replace("aten::", "aten.")
        if func.overloadpacket in (torch.ops.aten.mm, torch.ops.aten.addmm):
            a, b = (args[0], args[1]) if func.overloadpacket is torch.ops.aten.mm else (args[1], args[2])
            n = 2 * a.shape[0] * a.shape[1] * b.shape[1]
            for module in set(self.tracker.parents):
                self.counts[self.phase][module][packet] += n
        return out


def run(make_model, make_input, loss_fn, optimizer=False):
    torch.manual_seed(0)
    model = make_model()
    x = make_input()
    tracker = Tracker()
    tracker.name(model)
    pre = register_module_forward_pre_hook(tracker.pre_forward)
    post = register_module_forward_hook(tracker.post_forward)
    opt = torch.optim.SGD(model.parameters(), lr=0.1) if optimizer else None
    flops = Flops(tracker)
    try:
        with flops:
            loss = loss_fn(model(x))
            flops.phase = "backward"
            loss.backward()
            assert tracker.parents == {"Global"}, tracker.parents
            if opt is not None:
                flops.phase = "optimizer"
                opt.step()
    finally:
        pre.remove()
        post.remove()
    per_phase = {p: {m: dict(ops) for m, ops in mods.items()} for p, mods in flops.counts.items()}
    merged = defaultdict(lambda: defaultdict(int))
    for mods in flops.counts.values():
        for m, ops in mods.items():
            for op, n in ops.items():
                merged[m][op] += n
    tables = {d: table({m: list(ops.items()) for m, ops in merged.items()}, d) for d in (1, 2, 3)}
    return {"phases": per_phase, "backward_log": tracker.backward_log, "table": tables[2], "table_depth1": tables[1], "table_depth3": tables[3]}


def seed():
    model = lambda: torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    y = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    return run(model, lambda: torch.randn(8, 16), lambda out: torch.nn.functional.cross_entropy(out, y), True)


def nested():
    model = lambda: torch.nn.Sequential(
        torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU()), torch.nn.Linear(8, 3))
    return run(model, lambda: torch.randn(5, 6, requires_grad=True), lambda out: out.sum())


if __name__ == "__main__":
    print(json.dumps({"torch": torch.__version__, "seed": seed(), "nested": nested()}, indent=1))
