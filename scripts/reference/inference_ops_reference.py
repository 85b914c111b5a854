#!/usr/bin/python3
# scripts/reference/inference_ops_reference.py: writes tests/golden/inference_ops_torch.json, the
# values and gradients of the inference ops (sigmoid, tanh, gelu, softmax, mean, max, argmax,
# embedding, dropout in eval and with p = 0 / 1) from PyTorch, for tests/ops/test_inference_ops.cpp.
# Run with Debian's PyTorch 1.13 (/usr/bin/python3); every op used here computes the same in 2.8.
# Inputs are fixed numbers (listed in the JSON), so the C++ test rebuilds them exactly.
import json
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def values(t):
    return [float(v) if t.is_floating_point() else int(v) for v in t.detach().reshape(-1).tolist()]


def entry(x, out, grad_out=None):
    """The input, the output and, for a float output, x.grad from out.backward(grad_out)."""
    e = {"input": values(x), "input_shape": list(x.shape), "output": values(out), "output_shape": list(out.shape)}
    if grad_out is not None:
        out.backward(grad_out)
        e["grad_output"] = values(grad_out)
        e["grad_input"] = values(x.grad)
    return e


def fixed(shape, scale=0.37, shift=-1.9):
    n = 1
    for s in shape:
        n *= s
    # A deterministic spread of values, no ties, some negative, some large.
    return torch.tensor([(shift + scale * ((7 * i) % n)) * (1 + 0.1 * (i % 3)) for i in range(n)]).reshape(shape)


def leaf(shape, **kw):
    return fixed(shape, **kw).requires_grad_()


cases = {}
for name, fn in [("sigmoid", torch.sigmoid), ("tanh", torch.tanh), ("gelu_none", lambda x: F.gelu(x)),
                 ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"))]:
    x = leaf([3, 5])
    out = fn(x)
    cases[name] = entry(x, out, fixed([3, 5], scale=0.11, shift=-0.7))
for dim in (0, 1, -1):
    x = leaf([3, 5], scale=1.3)
    out = torch.softmax(x, dim)
    cases["softmax_dim%d" % dim] = entry(x, out, fixed([3, 5], scale=0.11, shift=-0.7))
x = leaf([2, 3, 4])
cases["softmax_3d_dim1"] = entry(x, torch.softmax(x, 1), fixed([2, 3, 4], scale=0.05, shift=-0.3))
x = leaf([3, 4])
cases["mean"] = entry(x, torch.mean(x), torch.tensor(1.5))
x = leaf([2, 3, 4])
cases["mean_dim_0_2"] = entry(x, torch.mean(x, [0, 2]), torch.tensor([1.0, -2.0, 0.5]))
x = leaf([2, 3, 4])
cases["mean_dim_1_keepdim"] = entry(x, torch.mean(x, [1], keepdim=True), fixed([2, 1, 4], scale=0.2, shift=-0.4))
x = torch.tensor([[1.0, 5.0, 5.0], [2.0, -1.0, 5.0]], requires_grad=True)
cases["max_ties"] = entry(x, torch.max(x), torch.tensor(3.0))
for dim, keepdim in ((0, False), (1, True), (-1, False)):
    x = torch.tensor([[1.0, 5.0, 5.0, 0.5], [2.0, -1.0, 7.0, 7.0], [9.0, 9.0, -3.0, 1.0]], requires_grad=True)
    values_, indices = torch.max(x, dim, keepdim=keepdim)
    e = entry(x, values_, torch.arange(1.0, values_.numel() + 1).reshape(values_.shape))
    e["indices"] = values(indices)
    e["argmax"] = values(torch.argmax(x, dim, keepdim=keepdim))
    cases["max_dim%d%s" % (dim, "_keepdim" if keepdim else "")] = e
x = torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), 2.0, float("nan")]])
v, i = torch.max(x, 1)
# JSON has no NaN: NaN inputs are null, and the values (all NaN here) are left out.
cases["max_nan"] = {"input": [None if a != a else a for a in values(x)], "input_shape": [2, 3],
                    "indices": values(i), "argmax": values(torch.argmax(x, 1)), "argmax_all": int(torch.argmax(x))}
w = leaf([6, 3])
idx = torch.tensor([[1, 4, 1], [0, 5, 1]])
cases["embedding_padding_1"] = entry(w, F.embedding(idx, w, padding_idx=1), fixed([2, 3, 3], scale=0.3, shift=-0.9))
cases["embedding_padding_1"]["indices"] = values(idx)
w = leaf([6, 3])
cases["embedding_scale_grad_by_freq"] = entry(w, F.embedding(idx, w, scale_grad_by_freq=True),
                                              fixed([2, 3, 3], scale=0.3, shift=-0.9))
cases["embedding_scale_grad_by_freq"]["indices"] = values(idx)
x = leaf([2, 3])
cases["dropout_eval"] = entry(x, F.dropout(x, 0.5, training=False), fixed([2, 3], scale=0.5, shift=1))
x = leaf([2, 3])
cases["dropout_p0"] = entry(x, F.dropout(x, 0.0, training=True), fixed([2, 3], scale=0.5, shift=1))
x = leaf([2, 3])
cases["dropout_p1"] = entry(x, F.dropout(x, 1.0, training=True), fixed([2, 3], scale=0.5, shift=1))

json.dump({"reference": "PyTorch " + torch.__version__, "cases": cases}, sys.stdout, indent=1, sort_keys=True)
print()
