#!/usr/bin/env python3
"""test_autograd.py's test_hook_none on real PyTorch, and the variants tests/extensions/
test_custom_function.cpp pins: a custom Function's backward returning None for a gradient, hooks on
its outputs, a hook that sees a None gradient, and one that tries to replace it (which raises).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/hook_none_reference.py
"""
import torch
from torch.autograd import Function
torch.manual_seed(0)
class NoneGradientFunction(Function):
    @staticmethod
    def forward(ctx, x, y):
        assert ctx.needs_input_grad[0]
        assert not ctx.needs_input_grad[1]
        return x, y
    @staticmethod
    def backward(ctx, grad_x, grad_y):
        return grad_x, None
seen = []
def hook(grad):
    seen.append(None if grad is None else grad.tolist())
x = torch.randn(5, 5, requires_grad=True)
y = torch.randn(5, 5)
rx, ry = NoneGradientFunction.apply(x, y)
print("rx", rx.grad_fn, rx.requires_grad, rx._base is x, "ry", ry.grad_fn, ry.requires_grad, ry._base is y)
rx.register_hook(hook); ry.register_hook(hook)
sum(rx, ry).sum().backward()
print("seen", seen)
print("x.grad", x.grad.tolist(), "y.grad", y.grad)
# variant: a hook on a tensor whose gradient a backward returned as None
class Double(Function):
    @staticmethod
    def forward(ctx, a): return a * 2
    @staticmethod
    def backward(ctx, g):
        print("  Double.backward got", None if g is None else g.tolist()); return g * 2
class FirstOnly(Function):
    @staticmethod
    def forward(ctx, a, b): return a + b
    @staticmethod
    def backward(ctx, g): return g, None
x = torch.tensor([1., 2.], requires_grad=True)
a = Double.apply(x); b = Double.apply(x)
seen = []
def h2(name):
    def f(g):
        seen.append((name, None if g is None else g.tolist())); return None
    return f
a.register_hook(h2("a")); b.register_hook(h2("b"))
FirstOnly.apply(a, b).sum().backward()
print("seen2", seen, "x.grad", x.grad.tolist())
# variant: set_materialize_grads(False) on Double
class DoubleNM(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False); return a * 2
    @staticmethod
    def backward(ctx, g):
        print("  DoubleNM.backward got", None if g is None else g.tolist())
        return None if g is None else g * 2
x = torch.tensor([1., 2.], requires_grad=True)
a = DoubleNM.apply(x); b = DoubleNM.apply(x)
seen = []
a.register_hook(h2("a")); b.register_hook(h2("b"))
FirstOnly.apply(a, b).sum().backward()
print("seen3", seen, "x.grad", x.grad.tolist())
# variant: a hook that returns a tensor for an undefined grad?
x = torch.tensor([1., 2.], requires_grad=True)
a = DoubleNM.apply(x); b = DoubleNM.apply(x)
b.register_hook(lambda g: torch.ones(2) if g is None else None)
try:
    FirstOnly.apply(a, b).sum().backward()
except RuntimeError as e:
    print("hook replaces None: raised", e)
# leaf: y requires grad, backward returns None for it
class NoneForSecond(Function):
    @staticmethod
    def forward(ctx, a, b): return a * 1, b * 1
    @staticmethod
    def backward(ctx, ga, gb): return ga, None
p = torch.ones(2, requires_grad=True); q = torch.ones(2, requires_grad=True)
seen = []
q.register_hook(h2("q")); p.register_hook(h2("p"))
u, v = NoneForSecond.apply(p, q)
(u + v).sum().backward()
print("leaf: seen", seen, "p.grad", p.grad, "q.grad", q.grad)
