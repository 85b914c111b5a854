"""Reference aten-op traces from real PyTorch for one SGD step of an MLP (the seed's experiment, generalised).

Runs on Debian's PyTorch 1.13 with torch.autograd.profiler.record_function replaced by its 2.x form, which is
the one difference found between 1.13 and 2.8 for this step (docs/seed-experiment.md, "Which PyTorch"). Prints the seed script's
JSON plus the ordered per-phase sequences and the LoggingTensor log.

Usage: /usr/bin/python3 scripts/reference/trace_reference.py --seed 0 --sizes 16,32,4 --batch 8
"""
import argparse, json
from collections import Counter
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.autograd.profiler as profiler
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map


def _rf_init(self, name, args=None):
    self.name, self.args, self.run_callbacks_on_exit, self.record = name, args, True, None


def _rf_enter(self):
    self.record = torch.ops.profiler._record_function_enter_new(self.name, self.args)
    return self


def _rf_exit(self, *exc):
    with torch._C.DisableTorchFunction():
        torch.ops.profiler._record_function_exit._RecordFunction(self.record)


profiler.record_function.__init__ = _rf_init
profiler.record_function.__enter__ = _rf_enter
profiler.record_function.__exit__ = _rf_exit

MM_LIKE = ("aten.mm.default", "aten.addmm.default", "aten.bmm.default")


class Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.phase = "forward"
        self.seq = {"forward": [], "backward": [], "optimizer": []}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seq[self.phase].append(str(func))
        return func(*args, **(kwargs or {}))


class LoggingTensor(torch.Tensor):
    __slots__ = ["elem", "log"]

    @staticmethod
    def __new__(cls, elem, log, requires_grad=False):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                                device=elem.device, requires_grad=requires_grad)
        r.elem, r.log = elem, log
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        log = None

        def unwrap(t):
            nonlocal log
            if isinstance(t, LoggingTensor):
                log = t.log
                return t.elem
            return t

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
        log.append(str(func))
        return tree_map(lambda t: LoggingTensor(t, log) if isinstance(t, torch.Tensor) else t, out)


def make_model(seed, sizes):
    torch.manual_seed(seed)
    mods = []
    for i in range(len(sizes) - 1):
        mods.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


def make_batch(seed, batch, n_in, n_out):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, n_in, generator=g), torch.randint(0, n_out, (batch,), generator=g)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sizes", default="16,32,4")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.1)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    torch.set_num_threads(1)

    model = make_model(a.seed, sizes)
    x, y = make_batch(a.seed + 1, a.batch, sizes[0], sizes[-1])
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    rec = Recorder()
    with rec:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        rec.phase = "backward"
        loss.backward()
        rec.phase = "optimizer"
        opt.step()

    model2 = make_model(a.seed, sizes)
    log = []
    params = [LoggingTensor(q.detach().clone(), log, requires_grad=True) for q in model2.parameters()]
    h = LoggingTensor(x, log)
    n_layers = len(sizes) - 1
    for i in range(n_layers):
        h = F.linear(h, params[2 * i], params[2 * i + 1])
        if i < n_layers - 1:
            h = F.relu(h)
    loss2 = F.cross_entropy(h, LoggingTensor(y, log))
    loss2.backward()
    h.detach()

    counts = {ph: dict(sorted(Counter(s).items())) for ph, s in rec.seq.items()}
    out = {
        "reference": "PyTorch %s with 2.x record_function" % torch.__version__,
        "seed": a.seed, "sizes": sizes, "batch": a.batch,
        "forward_ops": counts["forward"], "backward_ops": counts["backward"], "optimizer_ops": counts["optimizer"],
        "total_ops": sum(len(s) for s in rec.seq.values()),
        "mm_like_forward": sum(counts["forward"].get(n, 0) for n in MM_LIKE),
        "mm_like_backward": sum(counts["backward"].get(n, 0) for n in MM_LIKE),
        "subclass_grad_type": type(params[0].grad).__name__,
        "subclass_logged_ops": len(log), "subclass_distinct_ops": len(set(log)),
        "forward_seq": rec.seq["forward"], "backward_seq": rec.seq["backward"],
        "optimizer_seq": rec.seq["optimizer"], "subclass_log": log,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
