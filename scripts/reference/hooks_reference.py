#!/usr/bin/env python3
"""Hook orders and autograd.grad results from real PyTorch, for tests/golden/hooks_torch.json.

Each case is a small program also written in tests/autograd/test_hooks.cpp: tensor hooks,
retain_grad, node pre- and post-hooks and torch.autograd.grad, several ported from PyTorch's
test/test_autograd.py (test_hooks, test_retain_grad, test_grad, test_grad_nonleaf,
test_grad_unreachable). Each records the events its hooks log (name and gradient values, in order)
and the resulting gradients; the "ops" cases also record every op a TorchDispatchMode sees during the
backward. Only cases where Debian's PyTorch 1.13 and PyTorch 2.8 agree are here; the test pins the
2.8-only behaviour (hooks of a leaf under autograd.grad, post-accumulate-grad hooks) from 2.8's
sources and tests.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/hooks_reference.py
"""
import json
import sys

import torch

from backward_order_reference import OpLog


def values(t):
    return None if t is None else [float(v) for v in t.detach().reshape(-1).tolist()]


def hook_order():
    log = []
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0])
    y = x * w
    y.register_hook(lambda g: log.append(["y1", values(g)]))
    y.retain_grad()
    y.register_hook(lambda g: (log.append(["y2", values(g)]), g * 3)[1])
    y.grad_fn.register_prehook(lambda go: log.append(["pre", values(go[0])]))
    y.grad_fn.register_hook(lambda gi, go: log.append(["post", values(gi[0]), values(gi[1]), values(go[0])]))
    x.register_hook(lambda g: (log.append(["x1", values(g)]), g + 1)[1])
    x.register_hook(lambda g: log.append(["x2", values(g)]))
    (y * y).sum().backward()
    return {"log": log, "y.grad": values(y.grad), "x.grad": values(x.grad)}


def test_hooks():
    # test_autograd.py test_hooks, with x ** 2 written x * x.
    x = torch.ones(5, 5, requires_grad=True)
    y = (torch.ones(5, 5) * 4).requires_grad_(True)
    counter = [0]
    counts = []

    def bw_hook(inc, grad):
        counter[0] += inc

    z = x * x + x * 2 + x * y + y
    x.register_hook(lambda g: bw_hook(0, g))
    test = z.register_hook(lambda g: bw_hook(1, g))
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(counter[0])
    test2 = z.register_hook(lambda g: bw_hook(2, g))
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(counter[0])
    test2.remove()
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(counter[0])
    test.remove()
    z.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5), retain_graph=True)
    y_grad_1 = values(y.grad)
    y.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5))
    return {"counts": counts, "y.grad.1": y_grad_1, "y.grad.2": values(y.grad)}


def test_retain_grad():
    # test_autograd.py test_retain_grad, with a fixed input.
    inp = torch.tensor([[0.1, 0.2, 0.3]], requires_grad=True)
    h1 = inp * 3
    out = (h1 * h1).sum()
    h1.retain_grad()
    h1.retain_grad()
    out.backward(retain_graph=True)
    first = values(h1.grad)
    out.backward(retain_graph=True)
    second = values(h1.grad)
    with torch.no_grad():
        inp.grad.zero_()
    inp.retain_grad()
    out.backward()
    return {"h1.grad.1": first, "h1.grad.2": second, "input.grad": values(inp.grad),
            "h1.retains_grad": h1.retains_grad, "input.retains_grad": inp.retains_grad}


def retain_grad_inplace():
    # test_autograd.py test_retain_grad_inplace: the retain_grad hook follows the tensor to its new grad_fn.
    a = torch.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    return {"a.grad": values(a.grad)}


def test_grad():
    x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    y = torch.tensor([[2.0, 1.0], [-1.0, 0.25]], requires_grad=True)
    z = x * x + y * x + y * y
    z.backward(torch.ones(2, 2), create_graph=True)
    x_grad, y_grad = values(x.grad), values(y.grad)
    grad_sum = 2 * x.grad + y.grad
    x_hv = torch.autograd.grad(outputs=[grad_sum], grad_outputs=[torch.ones(2, 2)], inputs=[x], create_graph=True)
    try:
        torch.autograd.grad(outputs=[grad_sum], grad_outputs=[torch.ones(2)], inputs=[x], create_graph=True)
        error = None
    except RuntimeError as e:
        error = str(e)
    return {"x.grad": x_grad, "y.grad": y_grad, "x_hv": values(x_hv[0]), "x.grad.after": values(x.grad),
            "y.grad.after": values(y.grad), "shape_error": error}


def test_grad_nonleaf():
    x_init = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = x_init
    y = torch.tensor([[1.0, 0.5], [-0.5, 2.0]], requires_grad=True)
    grad_output = torch.ones(2, 2)

    def fn(x):
        return x * x + y * x + y * y

    grads = []
    for _ in range(5):
        grad_x, = torch.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
        grads.append(values(grad_x))
        assert x.grad is None and y.grad is None
        x = x + 0.05 * grad_x
    x.backward(grad_output)
    return {"grad_x": grads, "x_init.grad": values(x_init.grad), "y.grad": values(y.grad)}


def test_grad_unreachable():
    x = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    two = torch.tensor([2.0])
    z = x * two  # noqa: F841 (gives x and y grad accumulators)
    w = y * two  # noqa: F841
    gx, gy = torch.autograd.grad(x * two, [x, y], allow_unused=True)
    z2 = torch.ones(1, requires_grad=True)
    gx2, gz2 = torch.autograd.grad(x * two, [x, z2], allow_unused=True)
    try:
        torch.autograd.grad(x * two, [x, y], allow_unused=False)
        error = None
    except RuntimeError as e:
        error = str(e)
    return {"grad_x": values(gx), "grad_y": values(gy), "grad_x2": values(gx2), "grad_z": values(gz2), "error": error}


def grad_captures():
    # A non-leaf input is captured before its own hooks when the pass runs its node anyway (another
    # input lies below it); .grad never changes. (Alone, autograd.grad(b, [a]) differs: 2.8 runs a's
    # hook before capturing, 1.13 does not.)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0])
    a = x * w
    a.register_hook(lambda g: g * 100)
    b = (a * a).sum()
    a_and_x = torch.autograd.grad(b, [a, x], retain_graph=True)
    only_x = torch.autograd.grad(b, [x], retain_graph=True)
    return {"a_and_x": [values(t) for t in a_and_x], "only_x": values(only_x[0]),
            "x.grad": values(x.grad)}


def hook_ops():
    # The ops a hook and retain_grad dispatch, among the backward's own, as a mode sees them. (The hook
    # is registered first: 1.13 runs a retain_grad() registered earlier before it, 2.8 always after.)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0])
    y = x * w
    y.register_hook(lambda g: g.neg())
    y.retain_grad()
    loss = (y * y).sum()
    with OpLog() as mode:
        loss.backward()
    return {"ops": mode.ops, "x.grad": values(x.grad), "y.grad": values(y.grad)}


def main():
    out = {"torch_version": torch.__version__}
    for f in [hook_order, test_hooks, test_retain_grad, retain_grad_inplace, test_grad, test_grad_nonleaf,
              test_grad_unreachable, grad_captures, hook_ops]:
        out[f.__name__] = f()
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
