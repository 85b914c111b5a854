#!/usr/bin/env python3
"""zeros, ones, full and arange from real PyTorch, for tests/golden/factories_torch.json.

Each arange case gives its arguments (numbers as JSON: an integer stays an integer) and optionally a
dtype, and records the result's dtype and values, or the error; full records the dtype it infers
from fill_value (inf and nan arguments are the strings "inf" and "nan"). Where 1.13 and 2.8 agree (arange's dtype inference, lengths, values and messages).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/factories_reference.py > tests/golden/factories_torch.json
"""
import json
import sys

import torch

ARANGE = [
    ([5], None), ([0], None), ([5.0], None), ([1, 4], None), ([1, 2.5, 0.5], None), ([0, 1, 0.1], None),
    ([10, 0, -3], None), ([-1.5, 1.5], None), ([0, 10, 3], "float64"), ([0, 2.5, 0.5], "int64"), ([1, 10, 4], "int64"),
    ([0.5, 3], "int64"), ([0, -7, -2], None), ([0, 1, 0.3], "float32"), ([3, 3], None), ([True, 3], None),
    ([0, 1e-3, 1e-4], "float64"), ([-5, 5, 7], "float32"),
    ([0, 10, 0], None), ([10, 0, 1], None), ([0, 10, -1], None), ([0, float("inf")], None), ([float("nan"), 1], None),
    ([0, 10, 0.25], "int64"), ([0, 5], "bool"),
]
FULL = [2, 2.5, True, -3, 1e10]


def message(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e).split("\n")[0]
    return None


def encode(v):  # JSON has no inf or nan: strings, as in print_cases.json
    return str(v) if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")) else v


def main():
    out = {"arange": [], "full": []}
    for args, dtype in ARANGE:
        kw = {"dtype": getattr(torch, dtype)} if dtype else {}
        case = {"args": [encode(a) for a in args], "dtype": dtype}
        err = message(lambda: torch.arange(*args, **kw))
        if err is not None:
            case["error"] = err
        else:
            r = torch.arange(*args, **kw)
            case["result_dtype"] = str(r.dtype).replace("torch.", "")
            case["values"] = r.to(torch.float64).tolist()
        out["arange"].append(case)
    for v in FULL:
        r = torch.full((2,), v)
        out["full"].append({"value": v, "dtype": str(r.dtype).replace("torch.", ""), "values": r.to(torch.float64).tolist()})
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
