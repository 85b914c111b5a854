#!/usr/bin/env python3
"""Forward and backward op sequences of stack, max.dim, layer_norm's double backward and dropout, for tests/golden/op_sequences_torch.json.

Each case runs a forward under a TorchDispatchMode that logs every op (as backward_order_reference.py
does), then the backward of sum(output) (or of the case's own loss) under another. They pin what a
dispatch mode sees: stack as one op and StackBackward0's select per input; max.dim's backward
(value_selecting_reduction_backward: unsqueeze, zeros, scatter) and its double backward (gather);
dropout on CPU as empty_like, bernoulli_, div_, mul (PyTorch 1.13 and 2.8 agree on all of these: 2.8
scatters out of place under a mode too, since a mode makes every tensor subclass-like).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/op_sequences_reference.py
"""
import json
import sys

import torch

from backward_order_reference import OpLog, leaf  # the same logging mode and leaves

AS_IN_28 = {"aten._reshape_alias.default": "aten.view.default"}


def logged(fn):
    log = OpLog()
    with log:
        out = fn()
    return out, log.ops


def forward_backward(inputs, forward):
    """forward(*inputs) under a mode (the inputs made before it), then sum(output).backward() under another."""
    args = inputs()
    y, forward_ops = logged(lambda: forward(*args))
    loss = y.sum()
    _, backward_ops = logged(loss.backward)
    return {"forward": forward_ops, "backward": backward_ops}


def max_dim_double_backward(keepdim):
    """grad of max.dim's values with create_graph, then the backward of a weighted sum of it.

    1.13's autograd.grad checks the given gradient's shape with aten.is_same_size; 2.8's _make_grads
    compares sizes without an op (is_same_size only for nested tensors), so that entry is dropped."""
    x = leaf([1.0, 5.0, 3.0, 4.0, 2.0, 6.0], (2, 3))
    values, _ = torch.max(x, 1, keepdim)
    go = torch.ones(values.shape, requires_grad=True)
    weights = torch.arange(6.0).reshape(2, 3)
    (gx,), first = logged(lambda: torch.autograd.grad(values, x, go, create_graph=True))
    first = [op for op in first if op != "aten.is_same_size.default"]
    loss = (gx * weights).sum()
    _, second = logged(loss.backward)
    return {"backward": first, "double_backward": second}


def layer_norm_double_backward(affine):
    """grad of layer_norm's output (and weight) with create_graph, then the backward of a weighted sum
    of the gradients: native_layer_norm_backward's derivative is layer_norm_double_backward
    (FunctionsManual.cpp), a decomposition into pointwise ops and sums. With a weight, the sum reads
    grad_input and grad_weight (ggI and ggG; ggB stays undefined); without, grad_input alone.

    1.13's reshape dispatches _reshape_alias where 2.8's dispatches view under a mode (AS_IN_28); 1.13's
    autograd.grad's aten.is_same_size is dropped as in max_dim_double_backward. 2.8's
    layer_norm_double_backward is 1.13's, line for line."""
    x = leaf([1.0, 5.0, 3.0, 4.0, 2.0, 6.0], (2, 3))
    w = leaf([0.5, -1.0, 2.0], (3,)) if affine else None
    b = leaf([0.1, 0.2, 0.3], (3,)) if affine else None
    y = torch.nn.functional.layer_norm(x, (3,), w, b)
    go = torch.arange(6.0).reshape(2, 3).requires_grad_()
    wrt = (x, w, b) if affine else (x,)
    grads, first = logged(lambda: torch.autograd.grad(y, wrt, go, create_graph=True))
    first = [op for op in first if op != "aten.is_same_size.default"]
    loss = (grads[0] * torch.arange(6.0).reshape(2, 3)).sum()
    if affine:
        loss = loss + (grads[1] * torch.tensor([1.0, 2.0, 3.0])).sum()
    _, second = logged(loss.backward)
    second = [AS_IN_28.get(op, op) for op in second]
    leaves = (x, w, go) if affine else (x, go)
    return {"backward": first, "double_backward": second,
            "grads": [t.grad.flatten().tolist() for t in leaves]}


def pruned(wrt_y, accumulate):
    """A pass that runs part of its graph: grad of sum((a * b) * a) with respect to b alone (or to a
    and b), or backward(inputs=[b]). Only the gradients that lead to the inputs are computed
    (PyTorch's task_should_compute_output): one mul per MulBackward0, not two. PyTorch 1.13 and 2.8
    agree. With inputs=[b], AccumulateGrad detaches b's new gradient as a plain backward does, and
    a.grad stays None."""
    x = leaf([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3))
    y = leaf([2.0, 1.0, 4.0, 3.0, 6.0, 5.0], (2, 3))
    loss = ((x * y) * x).sum()
    wrt = [y] if wrt_y else [x, y]
    if accumulate:
        _, ops = logged(lambda: loss.backward(inputs=wrt))
        assert x.grad is None
        return {"backward": ops}
    _, ops = logged(lambda: torch.autograd.grad(loss, wrt))
    return {"backward": ops}


def cases():
    a = lambda: leaf([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3))
    b = lambda: leaf([2.0, 1.0, 4.0, 3.0, 6.0, 5.0], (2, 3))
    x = lambda: leaf([1.0, 5.0, 3.0, 4.0, 2.0, 6.0], (2, 3))
    ones = lambda: leaf([1.0] * 6, (2, 3))
    return {
        "stack_dim0": lambda: forward_backward(lambda: (a(), b()), lambda u, v: torch.stack([u, v])),
        "stack_dim1": lambda: forward_backward(lambda: (a(), b()), lambda u, v: torch.stack([u, v], 1)),
        "stack_dim_last_three": lambda: forward_backward(lambda: (a(), b(), a()), lambda u, v, w: torch.stack([u, v, w], -1)),
        "max_dim": lambda: forward_backward(lambda: (x(),), lambda u: torch.max(u, 1)[0]),
        "max_dim_keepdim": lambda: forward_backward(lambda: (x(),), lambda u: torch.max(u, 0, True)[0]),
        "max_dim_double_backward": lambda: max_dim_double_backward(False),
        "max_dim_keepdim_double_backward": lambda: max_dim_double_backward(True),
        "layer_norm_double_backward": lambda: layer_norm_double_backward(True),
        "layer_norm_double_backward_no_weight": lambda: layer_norm_double_backward(False),
        "dropout_train": lambda: forward_backward(lambda: (ones(),), lambda u: torch.dropout(u, 0.5, True)),
        "dropout_p1": lambda: forward_backward(lambda: (ones(),), lambda u: torch.dropout(u, 1.0, True)),
        "dropout_eval": lambda: forward_backward(lambda: (ones(),), lambda u: torch.dropout(u, 0.5, False)),
        "dropout_p0": lambda: forward_backward(lambda: (ones(),), lambda u: torch.dropout(u, 0.0, True)),
        "grad_wrt_one_input": lambda: pruned(True, False),
        "grad_wrt_both_inputs": lambda: pruned(False, False),
        "backward_inputs_one": lambda: pruned(True, True),
    }


def main():
    torch.manual_seed(0)
    out = {"reference": "PyTorch " + torch.__version__, "cases": {}}
    for name, run in cases().items():
        out["cases"][name] = run()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
