"""Reference aten-op traces from real PyTorch for one SGD step of an MLP (the seed's experiment, generalised).

Runs on Debian's PyTorch 1.13 with torch.autograd.profiler.record_function replaced by its 2.x form, which is
the one difference found between 1.13 and 2.8 for this step (docs/mlp-experiment.md, "Which PyTorch"). Prints the seed script's
JSON plus the ordered per-phase sequences and the LoggingTensor log.

Usage: /usr/bin/python3 scripts/reference/trace_reference.py --seed 0 --sizes 16,32,4 --batch 8
"""
import json
from collections import Counter
import torch
import torch.nn.functional as F
import torch.autograd.profiler as profiler
from torch.utils._python_dispatch import TorchDispatchMode

from dispatch_tracer import MM_LIKE, LoggingTensor, step_in_phases  # the seed's own wrapper subclass
from numerics_reference import make_batch, make_model, parse_step_args


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


class Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.phase = "forward"
        self.seq = {"forward": [], "backward": [], "optimizer": []}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seq[self.phase].append(str(func))
        return func(*args, **(kwargs or {}))


def main():
    a, sizes = parse_step_args()

    model = make_model(a.seed, sizes)
    x, y = make_batch(a.seed + 1, a.batch, sizes[0], sizes[-1])
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    rec = Recorder()
    step_in_phases(rec, model, x, y, opt)

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
