#!/usr/bin/env python3
"""PyTorch's answers for the op records (tests/ops/records/<family>.json), into
tests/golden/op_records/<family>.json.

The records are the one description of each op's test inputs (tests/ops/op_records.h has the
format); this script reads the same files and feeds PyTorch the same inputs: each tensor argument is
drawn from a generator seeded with 0, in argument order, in float64 (randn, or rand scaled into
{lo,hi}) or int64 (randint), then converted to the dtype under test and given its layout, exactly as
the C++ harness draws them. For every sample and dtype it writes the outputs' shapes, dtypes and
values; for the first dtype of a sample also the op sequence a logging TorchDispatchMode sees for the
call and for the backward of its floating outputs (grad_outputs of ones), the sequence a LoggingTensor
wrapper logs for the same two, and the gradients of the floating inputs; for every error input,
PyTorch's own message.

PyTorch 1.13 (Debian's python3-torch) answers for 2.8 here: where they differ for these calls (1.13's
autograd.grad checks the gradient's shape with aten.is_same_size, 2.8 does not; 1.13's reshape
dispatches _reshape_alias where 2.8's dispatches view; 1.13's pow backward makes its zero with zeros,
2.8's with scalar_tensor) the difference is removed and said below.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/op_records_reference.py [family ...]
"""
import glob
import json
import math
import os
import re
import sys

import torch

from backward_order_reference import OpLog  # a TorchDispatchMode that logs each op
from dispatch_tracer import LoggingTensor  # the experiment's own wrapper subclass

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "bool": torch.bool, "int8": torch.int8,
}
SHORT = {"f32": "float32", "f64": "float64", "i64": "int64", "bool": "bool", "i8": "int8", "f8": "float8_e4m3fn"}
SPEC = re.compile(r"^(T|f32|f64|i64|i8|bool|f8)\[([0-9,\s]*)\]((?::[a-z0-9]+)*)(?:\{([-+0-9.e]+|[-+]?inf|nan),([-+0-9.e]+|[-+]?inf|nan)\})?$")
# 1.13's autograd.grad checks a given gradient's shape with this op; 2.8's does not dispatch one.
NOT_IN_28 = {"aten.is_same_size.default"}
# 1.13's reshape of a viewable tensor dispatches _reshape_alias; 2.8's dispatches view for a contiguous
# one, and for any tensor while a mode is on or a wrapper's key is set (isTensorSubclassLike), which is
# every call logged here.
AS_IN_28 = {"aten._reshape_alias.default": "aten.view.default"}
# 1.13's pow_backward_self and pow_backward_exponent make their 0-d zero with at::zeros({}); 2.8's
# with at::scalar_tensor(0.0) (FunctionsManual.cpp), in the same place of the sequence.
BACKWARD_AS_IN_28 = {
    "aten::pow.Tensor_Tensor": {"aten.zeros.default": "aten.scalar_tensor.default"},
    "aten::pow_.Tensor": {"aten.zeros.default": "aten.scalar_tensor.default"},
}


def is_tensor_spec(value):
    return isinstance(value, str) and SPEC.match(value) is not None


def make_tensor(spec, dtype_name, g):
    m = SPEC.match(spec)
    kind = dtype_name if m.group(1) == "T" else SHORT[m.group(1)]
    shape = [int(s) for s in m.group(2).replace(" ", "").split(",") if s]
    layouts = [x for x in m.group(3).split(":") if x]
    if "offset" in layouts:
        shape[0] += 1
    base = list(shape)
    if "t" in layouts:
        base = base[::-1]
    if "expand" in layouts:
        base[0] = 1
    if "step2" in layouts:
        base[-1] *= 2
    dtype = DTYPES[kind]
    if dtype.is_floating_point:
        if m.group(4) is not None:
            lo, hi = float(m.group(4)), float(m.group(5))
            t = torch.rand(base, generator=g, dtype=torch.float64) * (hi - lo) + lo
        else:
            t = torch.randn(base, generator=g, dtype=torch.float64)
    else:
        lo, hi = (int(float(m.group(4))), int(float(m.group(5)))) if m.group(4) is not None else (0, 2 if kind == "bool" else 10)
        t = torch.randint(lo, hi, base, generator=g, dtype=torch.int64)
    t = t.to(dtype)
    if "t" in layouts:
        t = t.t()
    if "expand" in layouts:
        t = t.expand(shape)
    if "step2" in layouts:
        t = t[..., ::2]
    if "offset" in layouts:
        t = t[1:]
    if "meta" in layouts:
        t = t.to("meta")
    if "nograd" in layouts:  # not differentiated for (gradcheck and the backward leave it alone)
        t.record_nograd = True
    return t


def overload_of(qualified):
    ns, rest = qualified.split("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), name), overload or "default")


def convert(value, arg_type, dtype_name, g):
    """A record's JSON value as the Python argument for a schema argument of `arg_type`."""
    if isinstance(value, list) and value and all(is_tensor_spec(v) for v in value):
        return [make_tensor(v, dtype_name, g) for v in value]
    if is_tensor_spec(value):
        return make_tensor(value, dtype_name, g)
    if value in ("inf", "-inf", "nan") and arg_type.rstrip("?") in ("float", "Scalar"):
        return float(value)  # a float JSON cannot hold
    # 1.13's schema objects print a ScalarType argument as int ("Optional[int]"): a string there is a dtype
    if isinstance(value, str) and ("ScalarType" in arg_type or arg_type in ("int", "Optional[int]")):
        return DTYPES[dtype_name if value == "T" else value]
    if isinstance(value, str) and "MemoryFormat" in arg_type:
        return getattr(torch, value)
    if isinstance(value, str) and "Device" in arg_type:
        return torch.device(value)
    if isinstance(value, str) and "Layout" in arg_type:
        return getattr(torch, value)
    if isinstance(value, str) and "_RecordFunction" in arg_type:  # a scope opened before the call
        return torch.ops.profiler._record_function_enter_new(value, None)
    return value


def declared_types(schema):
    """The arguments' types as the schema declares them ("ScalarType?", "MemoryFormat?"): 1.13's
    arg.type names a ScalarType, Layout or MemoryFormat argument "int"."""
    text = str(schema)
    text = text[text.index("(") + 1:text.rindex(") ->")]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[(" and 1 or (c in "])" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip().split(" ")[0] for p in parts if p.strip() and p.strip() != "*"]


def build_call(record, sample_args, dtype_name):
    op = overload_of(record["op"])
    schema = op._schema
    g = torch.Generator().manual_seed(0)
    args, kwargs = [], {}
    for arg, declared, value in zip(schema.arguments, declared_types(schema), sample_args):
        v = convert(value, declared, dtype_name, g)
        if arg.kwarg_only:
            kwargs[arg.name] = v
        else:
            args.append(v)
    return op, schema, args, kwargs


def tensors_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    return []


def number(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def described(t, strides=False):
    if t._is_zerotensor():  # sgn's gradient of a real input: an _efficientzerotensor, zeros without storage
        t = torch.zeros(t.shape, dtype=t.dtype)
    values = t.detach().reshape(-1).tolist()
    if t.dtype == torch.bool:
        values = [int(v) for v in values]
    out = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": [number(v) for v in values]}
    if strides:  # the record's "strides": the test compares them too
        out["strides"] = list(t.stride())
    return out


def writes_first(schema):
    first = schema.arguments[0] if schema.arguments else None
    return first is not None and first.alias_info is not None and first.alias_info.is_write


def differentiable(t):
    return isinstance(t, torch.Tensor) and t.dtype.is_floating_point


def run_sequences(record, sample, dtype_name, wrapped):
    """The op and the backward of its floating outputs, logged by a mode (wrapped=False) or by
    LoggingTensor arguments (wrapped=True); gives (forward ops, backward ops, input gradients)."""
    op, schema, args, kwargs = build_call(record, sample["args"], dtype_name)
    grad = record.get("grad", True) and sample.get("grad", True)
    leaves = [t for t in tensors_of((args, kwargs))
              if differentiable(t) and not getattr(t, "record_nograd", False)] if grad else []
    for t in leaves:
        t.requires_grad_()
    log = []
    if wrapped:
        def wrap(v):
            if isinstance(v, torch.Tensor):
                w = LoggingTensor(v.detach(), log, requires_grad=v.requires_grad)
                if any(v is leaf for leaf in leaves):
                    wrappers.append(w)
                return w
            return v
        wrappers = []
        args = torch.utils._pytree.tree_map(wrap, args)
        kwargs = torch.utils._pytree.tree_map(wrap, kwargs)
        leaves = wrappers
        if not leaves and not tensors_of((args, kwargs)):
            return None, None, None
    if writes_first(schema):  # an in-place op writes a copy: a leaf that requires grad may not be written
        args[0] = args[0].clone()
    start = len(log)
    if wrapped:
        out = op(*args, **kwargs)
        forward = log[start:]
    else:
        mode = OpLog()
        with mode:
            out = op(*args, **kwargs)
        forward = mode.ops
    forward = [AS_IN_28.get(o, o) for o in forward]
    outs = [t for t in tensors_of(out) if t.requires_grad]
    if not outs or not leaves:
        return forward, None, None
    ones = [torch.ones(t.shape, dtype=t.dtype) for t in outs]
    start = len(log)
    if wrapped:
        grads = torch.autograd.grad(outs, leaves, ones, allow_unused=True)
        backward = log[start:]
    else:
        mode = OpLog()
        with mode:
            grads = torch.autograd.grad(outs, leaves, ones, allow_unused=True)
        backward = mode.ops
    backward = [AS_IN_28.get(o, o) for o in backward if o not in NOT_IN_28]
    renamed = BACKWARD_AS_IN_28.get(record["op"], {})
    backward = [renamed.get(o, o) for o in backward]
    if wrapped:  # only the mode's gradients are compared; 1.13 hands a view's back as a LoggingTensor without elem
        return forward, backward, None
    grads = [described(g) if g is not None else None for g in grads]
    return forward, backward, grads


def answer(record, sample, dtype_name, first_dtype):
    if "pytorch" in record:  # the record says why PyTorch 1.13 cannot answer (an op or dtype it lacks)
        return {"outputs": None}
    op, _, args, kwargs = build_call(record, sample["args"], dtype_name)
    torch.manual_seed(0)  # random ops draw from the default generator, seeded as the C++ harness seeds it
    if writes_first(op._schema):
        args[0] = args[0].clone()
    out = op(*args, **kwargs)
    result = {"outputs": [described(t, record.get("strides", False)) for t in tensors_of(out)]}
    if first_dtype and record.get("sequence", True):
        torch.manual_seed(0)
        forward, backward, grads = run_sequences(record, sample, dtype_name, wrapped=False)
        torch.manual_seed(0)
        wforward, wbackward, _ = run_sequences(record, sample, dtype_name, wrapped=True)
        result.update({"forward": forward, "backward": backward, "grads": grads,
                       "wrapper_forward": wforward, "wrapper_backward": wbackward})
    return result


def error_of(record, case):
    if "pytorch" in record:
        return None
    dtype_name = case.get("dtype", record.get("dtypes", ["float32"])[0])
    try:
        op, schema, args, kwargs = build_call(record, case["args"], dtype_name)
        op(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (any error PyTorch raises is its answer)
        message = str(e).split("\n")[0]
        words = case.get("pytorch_message", case["message"])  # PyTorch's words where strata's differ by a choice
        if case.get("strata_only") is None and words not in str(e):
            print(f"{record['op']}: PyTorch says {message!r}, the record expects {words!r}", file=sys.stderr)
        return message
    if case.get("strata_only") is None:
        print(f"{record['op']}: PyTorch accepts {case['args']}; the record expects an error", file=sys.stderr)
    return None


def family_answers(path):
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    answers = {}
    for record in records:
        dtypes = record.get("dtypes", ["float32", "float64"])
        entry = {"samples": []}
        for sample in record.get("samples", []):
            per_dtype = {}
            for i, dtype_name in enumerate(sample.get("dtypes", dtypes)):
                per_dtype[dtype_name] = answer(record, sample, dtype_name, i == 0)
            entry["samples"].append(per_dtype)
        entry["errors"] = [error_of(record, case) for case in record.get("errors", [])]
        answers[record["op"]] = entry
    return answers


def main():
    wanted = set(sys.argv[1:])
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/ops/records/*.json"))):
        family = os.path.splitext(os.path.basename(path))[0]
        if wanted and family not in wanted:
            continue
        out = os.path.join(ROOT, "tests/golden/op_records", family + ".json")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        answers = family_answers(path)
        with open(out, "w", encoding="utf-8") as f:  # one line per op: diffs show which op changed
            f.write("{\n" + ",\n".join(f" {json.dumps(op)}: {json.dumps(a, separators=(',', ':'))}"
                                        for op, a in answers.items()) + "\n}\n")
        print("wrote", os.path.relpath(out, ROOT))


main()
