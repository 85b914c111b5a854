"""Reference DebugMode logs of the seed step, for tests/golden/debug_mode_torch_seed0_16-32-4_b8.json.

PyTorch 1.13 (Debian's, the one installed) has no DebugMode: torch/utils/_debug_mode.py was added
after 2.8 (pull request 162665). This script re-implements that module's log format in a small
TorchDispatchMode (the dispatch half only: no torch functions, no modules), as the current upstream
source writes it: one line per op, "  " + "  " * depth, depth 1 for a dispatch op with no enclosing call;
`aten::addmm(t: f32[32], t: f32[8, 16], t: f32[16, 32])` (OpOverload.__qualname__ and the
arguments __torch_dispatch__ receives); `  ->  t$3: f32[8, 32]` outputs with record_output; `$N`
ids per live tensor with record_ids; `  # {'hash': ...}` from log_tensor_hashes("norm"); the
profiler::_record_function ops are not recorded. Record-function is patched to its 2.x form as in
trace_reference.py.

Usage: (cd scripts/reference && /usr/bin/python3 debug_mode_reference.py) > tests/golden/debug_mode_torch_seed0_16-32-4_b8.json
(the default step: --seed 0 --sizes 16,32,4 --batch 8 --lr 0.1)
"""
import json
import weakref

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_flatten, tree_map
from torch.utils._python_dispatch import TorchDispatchMode

import trace_reference  # noqa: F401  (patches record_function to its 2.x form)
from numerics_reference import make_batch, make_model, parse_step_args

ABBR = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "b8"}


class Ids:
    """upstream's TensorIdTracker: an id per live tensor object, dropped when the tensor dies."""

    def __init__(self):
        self.memo, self.next = {}, 0

    def __call__(self, t):
        key = id(t)
        if key not in self.memo:
            self.memo[key] = self.next
            self.next += 1
            weakref.finalize(t, self.memo.pop, key, None)
        return self.memo[key]


def norm_hash(t):
    if not (t.is_floating_point() or t.is_complex()):
        t = t.float()
    return t.contiguous().to(torch.float64).norm(p=1).item()


class RefDebugMode(TorchDispatchMode):
    def __init__(self, record_output, record_ids, hashes):
        super().__init__()
        self.record_output, self.hashes = record_output, hashes
        self.ids = Ids() if record_ids else None
        self.lines = []

    def tensor_str(self, t):
        ids = f"${self.ids(t)}" if self.ids else ""
        return f"t{ids}: {ABBR[t.dtype]}[{', '.join(str(s) for s in t.shape)}]"

    def arg_str(self, a):
        return str(tree_map(lambda x: self.tensor_str(x) if isinstance(x, torch.Tensor) else x, a))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        text = func.__qualname__ + "(" + ", ".join(self.arg_str(a) for a in args)
        text += "".join(f", {k}={self.arg_str(v)}" for k, v in kwargs.items()) + ")"
        result = func(*args, **kwargs)
        if str(func).startswith("profiler."):
            return result
        if self.record_output and not all(x is None for x in tree_flatten(result)[0]):
            text += "  ->  " + str(tree_map(self.arg_str, result))
        if self.hashes and "empty" not in str(func):
            h = tree_map(lambda x: norm_hash(x) if isinstance(x, torch.Tensor) else None, result)
            if not all(x is None for x in tree_flatten(h)[0]):
                text += "  # " + str({"hash": h})
        self.lines.append("    " + text)
        return result


def run(a, sizes, **options):
    model = make_model(a.seed, sizes)
    x, y = make_batch(a.seed + 1, a.batch, sizes[0], sizes[-1])
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    mode = RefDebugMode(**options)
    with mode:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return "\n".join(mode.lines)


def main():
    a, sizes = parse_step_args()
    out = {
        "reference": "upstream DebugMode's log format re-implemented on PyTorch %s" % torch.__version__,
        "seed": a.seed, "sizes": sizes, "batch": a.batch, "lr": a.lr,
        "plain": run(a, sizes, record_output=False, record_ids=False, hashes=False),
        "output_ids": run(a, sizes, record_output=True, record_ids=True, hashes=False),
        "norm_hashes": run(a, sizes, record_output=False, record_ids=False, hashes=True),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
