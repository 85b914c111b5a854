#!/usr/bin/python3
# scripts/reference/custom_function_reference.py: what a dispatch mode sees, and the gradients, for
# the custom autograd functions of tests/extensions/test_custom_function.cpp, on real PyTorch
# (torch.autograd.Function, which shares LibTorch's Function<T> semantics: _wrap_outputs).
# Run with Debian's PyTorch: /usr/bin/python3 scripts/reference/custom_function_reference.py
import json

import torch

from backward_order_reference import OpLog  # the logging mode the other reference scripts use
from dispatch_tracer import LoggingTensor


class MulAdd(torch.autograd.Function):  # a * b + a
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + a

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b + g, g * a


class ReturnsInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, g):
        return g + g


out = {}
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = torch.tensor([4., 5., 6.], requires_grad=True)
with OpLog() as m:
    r = MulAdd.apply(x, y)
    name = type(r.grad_fn).__name__
    r.sum().backward()
out["muladd"] = {"node": name, "ops": m.ops, "x_grad": x.grad.tolist(), "y_grad": y.grad.tolist()}
x = torch.ones(2, requires_grad=True)
with OpLog() as m:
    r = ReturnsInput.apply(x)
    same = r is x
    r.sum().backward()
out["returns_input"] = {"same_tensor": same, "is_view": r._base is x, "ops": m.ops, "x_grad": x.grad.tolist()}
log = []
x = LoggingTensor(torch.tensor([1., 2.]), log, requires_grad=True)
y = torch.tensor([3., 4.])
r = MulAdd.apply(x, y)
r.sum().backward()
out["logging_tensor"] = {"node": type(r.grad_fn).__name__, "log": log, "x_grad": x.grad.elem.tolist(),
                         "grad_is_logging_tensor": isinstance(x.grad, LoggingTensor)}
print(json.dumps(out, indent=1))
