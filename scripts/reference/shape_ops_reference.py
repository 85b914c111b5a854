#!/usr/bin/env python3
"""select, slice, narrow, cat and stack from real PyTorch, for tests/golden/shape_ops_torch.json.

Each view case takes x = arange(numel).view(shape) (float32; when "transposed", arange over the reversed
shape with its first and last dims swapped: a non-contiguous x of the same shape, for at most 3 dims),
records the view's sizes, strides, storage offset and values, and the gradient x gets from
(view * w).sum() with w = arange(1, n + 1) (select_backward / slice_backward). Each join case takes
inputs filled with distinct values (input k holds 100 * k + arange), records the output's sizes,
dtype and values, and each input's gradient from (out * w).sum(). Error cases record messages where
1.13 and 2.8 agree (select, slice, cat, stack; narrow's differ, so its are in test_op_errors.cpp).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/shape_ops_reference.py > tests/golden/shape_ops_torch.json
"""
import json

import torch

VIEWS = [
    ("select", [3], False, [0, 1]), ("select", [3], False, [0, -1]), ("select", [2, 3], False, [1, 2]),
    ("select", [2, 3], False, [-1, -3]), ("select", [2, 3, 4], True, [0, 1]), ("select", [1], False, [0, 0]),
    ("slice", [10], False, [0, 2, 8, 3]), ("slice", [10], False, [0, -100, 100, 3]), ("slice", [10], False, [0, 7, 2, 1]),
    ("slice", [10], False, [0, -3, None, 1]), ("slice", [10], False, [0, None, -3, 2]), ("slice", [10], False, [0, 10, 20, 1]),
    ("slice", [4, 5], False, [1, 1, None, 2]), ("slice", [4, 5], True, [-1, 0, 3, 2]), ("slice", [4, 5], False, [0, 3, 4, 100]),
    ("slice", [4, 5], False, [-2, None, None, 1]), ("slice", [0, 3], False, [0, 1, 2, 1]),
    ("narrow", [5], False, [0, 1, 3]), ("narrow", [5], False, [0, -2, 2]), ("narrow", [3, 4], True, [1, 1, 2]),
    ("narrow", [3, 4], False, [-1, 4, 0]), ("narrow", [3, 4], False, [0, 0, 3]),
]

JOINS = [
    ("cat", [([2, 3], "float32"), ([2, 1], "float32")], 1), ("cat", [([2, 3], "float32"), ([4, 3], "float32")], 0),
    ("cat", [([2, 3], "float32"), ([2, 3], "float32"), ([2, 2], "float32")], -1),
    ("cat", [([3], "float32"), ([2], "float64")], 0), ("cat", [([0], "float32"), ([2, 2], "float32")], 1),
    ("cat", [([2, 0], "float32"), ([2, 2], "float32")], 1), ("cat", [([2], "int64"), ([1], "bool")], 0),
    ("cat", [([2, 2], "float32"), ([0], "float64"), ([1, 2], "float32")], 0), ("cat", [([1, 2, 2], "float64")], 2),
    ("stack", [([2, 3], "float32"), ([2, 3], "float32")], 0), ("stack", [([2, 3], "float32"), ([2, 3], "float32")], 1),
    ("stack", [([2, 3], "float32"), ([2, 3], "float64"), ([2, 3], "float32")], -1), ("stack", [([3], "int64")], 0),
    ("stack", [([0], "float32"), ([0], "float32")], 1),
]

ERRORS = [
    ("select", [3], [0, 5]), ("select", [3], [0, -4]), ("select", [2, 3], [-1, 3]), ("select", [], [0, 0]),
    ("select", [2, 3], [2, 0]), ("slice", [3], [0, 0, 3, 0]), ("slice", [3], [0, 0, 3, -1]), ("slice", [], [0, 0, 1, 1]),
    ("slice", [2, 3], [-3, 0, 1, 1]),
]
JOIN_ERRORS = [
    ("cat", [], 0), ("cat", [[2, 2], [3, 3]], 1), ("cat", [[2, 2], [3, 3]], 0), ("cat", [[2, 2], [3]], 0),
    ("cat", [[], []], 0), ("cat", [[2, 2], [2, 2]], 2), ("cat", [[2, 2], [2, 2]], -3), ("stack", [], 0),
    ("stack", [[2], [3]], 0), ("stack", [[2], [2]], 3), ("stack", [[2, 3], [2, 3], [3, 2]], -1),
]

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "bool": torch.bool}


def source(shape, transposed):
    n = 1
    for s in shape:
        n *= s
    if transposed:  # the same shape laid out in reverse: arange over the reversed shape, dims 0 and -1 swapped
        return torch.arange(float(n)).view(list(reversed(shape))).transpose(0, len(shape) - 1)
    return torch.arange(float(n)).view(shape)


def apply(op, x, args):
    if op == "select":
        return torch.select(x, *args)
    if op == "slice":
        return torch.ops.aten.slice(x, *args)
    return torch.narrow(x, *args)


def join_inputs(inputs):
    out = []
    for k, (shape, dtype) in enumerate(inputs):
        n = 1
        for s in shape:
            n *= s
        t = (torch.arange(n, dtype=torch.float64) + 100 * k).view(shape)
        if dtype == "bool":
            t = (torch.arange(n) % 2 == 0).view(shape)
        out.append(t.to(DTYPES[dtype]))
    return out


def message(fn):
    try:
        fn()
    except (RuntimeError, IndexError) as e:
        return str(e).split("\n")[0]
    raise AssertionError("no error")


def main():
    out = {"views": [], "joins": [], "errors": []}
    for op, shape, transposed, args in VIEWS:
        x = source(shape, transposed).requires_grad_()
        v = apply(op, x, args)
        (v * torch.arange(1.0, v.numel() + 1).view(v.shape)).sum().backward()
        out["views"].append({"op": op, "shape": shape, "transposed": transposed, "args": args,
                             "source_strides": list(x.stride()), "sizes": list(v.shape), "strides": list(v.stride()),
                             "storage_offset": v.storage_offset(), "values": v.detach().flatten().tolist(),
                             "grad": x.grad.flatten().tolist()})
    for op, inputs, dim in JOINS:
        xs = join_inputs(inputs)
        for x in xs:
            if x.is_floating_point():
                x.requires_grad_()
        y = getattr(torch, op)(xs, dim)
        case = {"op": op, "inputs": [{"shape": s, "dtype": d} for s, d in inputs], "dim": dim, "sizes": list(y.shape),
                "dtype": str(y.dtype).replace("torch.", ""), "values": y.detach().to(torch.float64).flatten().tolist()}
        if y.requires_grad:
            (y * torch.arange(1.0, y.numel() + 1).view(y.shape)).sum().backward()
            case["grads"] = [x.grad.flatten().tolist() if x.grad is not None else None for x in xs]
        out["joins"].append(case)
    for op, shape, args in ERRORS:
        x = torch.zeros(shape)
        out["errors"].append({"op": op, "shape": shape, "args": args, "message": message(lambda: apply(op, x, args))})
    for op, shapes, dim in JOIN_ERRORS:
        xs = [torch.zeros(s) for s in shapes]
        out["errors"].append({"op": op, "shapes": shapes, "dim": dim, "message": message(lambda: getattr(torch, op)(xs, dim))})
    json.dump(out, __import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
