#!/usr/bin/env python3
"""Autograd of in-place ops on views, from real PyTorch: tests/golden/inplace_views_torch.json, which
tests/autograd/test_inplace_views.cpp reads.

Each case records the gradients, the grad_fn names (CopySlices, AsStridedBackward0), the errors, and
where asked the ops a TorchDispatchMode sees during backward (CopySlices' and AsStridedBackward0's).

Run with Debian's python3-torch:
  /usr/bin/python3 scripts/reference/inplace_view_reference.py > tests/golden/inplace_views_torch.json
"""
import json
import sys

import torch

from backward_order_reference import OpLog  # this script's folder is on sys.path


def logged_backward(loss):
    """The ops a dispatch mode sees during loss.backward()."""
    log = OpLog()
    with log:
        loss.backward()
    return log.ops


def leaf(values):
    return torch.tensor(values, dtype=torch.float32).requires_grad_()


def view_multiplied_in_place():
    """Leaves x (4 elements) and w (2x2); y = x * 2; v = y.view(2, 2), then v.mul_(w)."""
    x = leaf([1.0, 2.0, 3.0, 4.0])
    w = leaf([[1.0, -1.0], [0.5, 2.0]])
    y = x * 2
    v = y.view(2, 2)
    v.mul_(w)
    return x, w, y, v


def name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def error_of(f):
    try:
        f()
    except RuntimeError as e:
        return str(e)
    return None


def main():
    out = {"reference": "PyTorch " + torch.__version__}
    c = torch.tensor([[1.0, 2.0], [3.0, 4.0]])

    x = leaf([1.0, 2.0, 3.0, 4.0])
    out["view_of_leaf"] = error_of(lambda: x.view(2, 2).add_(torch.ones(2, 2)))
    out["view_of_view_of_leaf"] = error_of(lambda: x.view(2, 2).t().add_(torch.ones(2, 2)))
    out["leaf"] = error_of(lambda: x.add_(1.0))
    # A view taken before its base was set to require grad requires grad through the base.
    base = torch.tensor([1.0, 2.0, 3.0, 4.0])
    early = base.view(2, 2)
    base.requires_grad_()
    out["view_taken_before_requires_grad"] = error_of(lambda: early.copy_(base.view(2, 2)))

    # A leaf that stopped requiring grad, written from a view of itself: accepted, and its new history
    # reaches its own AccumulateGrad, which holds it (a cycle PyTorch never frees).
    x = leaf([1.0, 2.0, 3.0, 4.0])
    v = x.view(2, 2)
    x.requires_grad_(False)
    x.copy_(v.view(4))
    nexts = [None if f is None else type(f).__name__ for f, _ in x.grad_fn.next_functions]
    chain, node = [], x.grad_fn.next_functions[1][0]
    while node is not None:
        chain.append(type(node).__name__)
        held = getattr(node, "variable", None)
        node = node.next_functions[0][0] if node.next_functions else None
    out["leaf_written_from_own_view"] = {
        "x": name(x), "x_next": nexts, "requires_grad": x.requires_grad, "is_leaf": x.is_leaf,
        "src_chain": chain, "accumulator_holds_x": held is x}

    # Defect 2: an in-place op on a view rebases the base's history onto CopySlices.
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 2
    v = y.view(2, 2)
    v.add_(v)
    out["add_self_on_view"] = {"y": name(y), "v": name(v), "y_next": type(y.grad_fn.next_functions[0][0]).__name__}
    y.sum().backward()
    out["add_self_on_view"]["x_grad"] = x.grad.tolist()

    # Defect 3: an in-place op on the base regenerates the view's grad_fn.
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 2
    v = y.view(2, 2)
    before = name(v)
    y.mul_(3)
    case = {"v_before": before, "y": name(y), "v": name(v), "v_next": type(v.grad_fn.next_functions[0][0]).__name__}
    (v * c).sum().backward()
    case["x_grad"] = x.grad.tolist()
    out["mul_on_base"] = case

    # A view of a view keeps the root base; in-place through it (a transpose of a view).
    x = leaf([1.0, 2.0, 3.0, 4.0])
    w = leaf([[0.5, -1.0], [2.0, 3.0]])
    y = x * 2
    v2 = y.view(2, 2).t()
    case = {"base_is_root": v2._base is y}
    v2.mul_(w)
    case.update({"y": name(y), "v2": name(v2)})
    (y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    case.update({"x_grad": x.grad.tolist(), "w_grad": w.grad.tolist()})
    out["mul_on_transposed_view_of_view"] = case

    # An as_strided view (every other element, from offset 1).
    x = leaf([1.0, 2.0, 3.0, 4.0, 5.0])
    y = x * 2
    v = y.as_strided((2,), (2,), 1)
    v.mul_(3)
    case = {"y": name(y), "v": name(v)}
    (y * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    case["x_grad"] = x.grad.tolist()
    out["mul_on_as_strided_view"] = case

    # Two in-place ops on one view, a loss through both the base and the view; retain_graph.
    x, w, y, v = view_multiplied_in_place()
    v.add_(w, alpha=2)
    case = {"y": name(y), "v": name(v), "y_next": type(y.grad_fn.next_functions[0][0]).__name__}
    loss = (y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum() + (v * c).sum()
    loss.backward(retain_graph=True)
    case.update({"x_grad": x.grad.tolist(), "w_grad": w.grad.tolist()})
    loss.backward()
    case.update({"x_grad_twice": x.grad.tolist(), "w_grad_twice": w.grad.tolist()})
    out["two_inplace_ops_on_a_view"] = case

    # A root base with a storage offset (a plain view given a history by copy_), written through a view.
    x = leaf([1.0, 2.0, 3.0, 4.0])
    w = leaf([[1.0, -1.0], [0.5, 2.0]])
    b = torch.zeros(6).as_strided((4,), (1,), 2)
    b.copy_(x)
    v = b.view(2, 2)
    v.mul_(w)
    case = {"b": name(b), "v": name(v)}
    ((b * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum() + (v * c).sum()).backward()
    case.update({"x_grad": x.grad.tolist(), "w_grad": w.grad.tolist()})
    out["base_with_offset"] = case

    # The ops a mode sees during a CopySlices backward.
    x, w, y, v = view_multiplied_in_place()
    out["copy_slices_backward_ops"] = logged_backward(y.sum())
    out["copy_slices_backward_grads"] = {"x_grad": x.grad.tolist(), "w_grad": w.grad.tolist()}

    # The same for the regenerated AsStridedBackward0 (a loss through the view after a base in-place).
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 2
    v = y.view(2, 2)
    y.mul_(3)
    out["as_strided_backward_ops"] = logged_backward((v * c).sum())

    # no_grad: in-place on a view of a leaf, and of a non-leaf, records nothing and does not throw.
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 2
    v = y.view(2, 2)
    vx = x.view(2, 2)
    with torch.no_grad():
        vx.add_(1.0)
        v.add_(1.0)
    case = {"x": x.tolist(), "y": name(y), "v": name(v), "v_next": type(v.grad_fn.next_functions[0][0]).__name__}
    (v * c).sum().backward()
    case["x_grad"] = x.grad.tolist()
    out["no_grad"] = case

    # Views of tensors that do not require grad are tracked too: an in-place op through one with an
    # input that requires grad gives the base a CopySlices history, and the gradient reaches the input.
    x = leaf([1.0, 2.0])
    a = torch.zeros(4)
    v = a[1:3]
    v.mul_(0).add_(x * 3)
    case = {"a": name(a), "v": name(v), "a_next": type(a.grad_fn.next_functions[0][0]).__name__,
            "a_values": a.tolist()}
    (a * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    case["x_grad"] = x.grad.tolist()
    out["plain_base"] = case
    # The same through a transposed view of a plain matrix, and through a view of that view.
    x = leaf([1.0, 2.0, 3.0, 4.0])
    m = torch.zeros(2, 2)
    m.t().unsqueeze(0).copy_((x * 2).view(1, 2, 2))
    case = {"m": name(m), "m_values": m.tolist()}
    (m * c).sum().backward()
    case["x_grad"] = x.grad.tolist()
    out["plain_base_view_of_view"] = case
    # A view made under no_grad may not be written in place where autograd would record the write;
    # a write with no input that requires grad, or one under no_grad, is allowed.
    x = leaf([1.0, 2.0])
    a = torch.zeros(4)
    with torch.no_grad():
        v = a[1:3]
        vv = v.view(2, 1)
    case = {"error": error_of(lambda: v.add_(x)), "view_of_view": error_of(lambda: vv.mul_(x.view(2, 1)))}
    v.add_(torch.ones(2))
    with torch.no_grad():
        v.add_(x)
    case["a_values"] = a.tolist()
    case["a"] = name(a)
    w = leaf([1.0, 2.0, 3.0, 4.0])
    with torch.no_grad():
        wv = w.view(2, 2)
    case["of_leaf"] = error_of(lambda: wv.mul_(torch.ones(2, 2, requires_grad=True)))
    out["no_grad_view"] = case
    # detach is no view to autograd: an in-place op through it gives it a history, not its source.
    a = torch.zeros(3)
    d = a.detach()
    d.add_(leaf([1.0, 2.0, 3.0]))
    out["detach_of_plain"] = {"a": name(a), "d": name(d)}
    # A view saved before its base is written: the view counts the base's writes, on meta tensors too.
    for device in ["cpu", "meta"]:
        a = torch.zeros(3, 3, device=device, requires_grad=True)
        b = a.relu()
        v = b.t()
        m = v * v
        b.add_(m)
        error = error_of(lambda: m.sum().backward())
        out["saved_view_of_written_base_" + device] = {"v_version": v._version, "b_version": b._version,
                                                        "error": error.split(" Hint:")[0]}

    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
