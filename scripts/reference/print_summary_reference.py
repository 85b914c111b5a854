#!/usr/bin/env python3
"""Summarised reprs of huge expanded views from real PyTorch, for tests/golden/print_summary_torch.json.

Above 1000 elements PyTorch prints the first and last 3 items of each dimension longer than 6 and
measures column widths on those only. Each case is a small base tensor expanded (stride 0) to a
shape of up to 2^40 elements, which only a printer that reads the shown elements can print.
PyTorch 1.13 prints these as 2.8 does.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/print_summary_reference.py
"""
import json
import math
import sys

import torch

CASES = [
    # name, dtype, base values, base shape, expanded shape
    ("1-d, 2^40 elements", torch.float32, [5.0], [1], [2**40]),
    ("row repeated 2^37 times", torch.float32, [0.5, -1.25, 3.0, 4.75, 0.001, 2.0, -7.5, 8.0], [1, 8], [2**37, 8]),
    ("3-d with a short middle dimension", torch.float32, [1.5, -2.0, 3.25, 4.0, -5.5], [1, 5, 1], [2**20, 5, 2**20]),
    ("int64 beyond 2^53 stay exact", torch.int64, [2**62 + 1, -(2**53 + 1), 7], [3], [2**38, 3]),
    ("bool", torch.bool, [1, 0, 0, 1], [4], [2**36, 4]),
    ("float64 in scientific mode", torch.float64, [1e-05, 12345.678], [2, 1], [2, 2**39]),
    ("an elided middle is not measured", torch.float32, [1.0, 2.0, 3.0, 1e10, 4.0, 5.0, 6.0], [7], [200, 7]),
    ("nonfinite at the edges", torch.float32, [float("nan"), 1.5, float("inf"), 2.0, 3.0, 4.0, float("-inf")], [7],
     [3, 400, 7]),
    ("dimensions of 6 or fewer are shown whole", torch.float32, [0.25, -0.5], [1, 2, 1], [5000, 2, 3]),
    ("integral floats", torch.float32, [1.0, -20.0, 300.0], [3, 1, 1], [3, 2**30, 9]),
]


def encode(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def main():
    out = []
    for name, dtype, values, base_shape, shape in CASES:
        base = torch.tensor(values, dtype=dtype).reshape(base_shape)
        out.append({
            "name": name,
            "dtype": str(dtype).replace("torch.", ""),
            "base_values": [encode(v) for v in values],
            "base_shape": base_shape,
            "expand": shape,
            "repr": repr(base.expand(shape)),
        })
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
