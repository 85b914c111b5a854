#!/usr/bin/env python3
"""Element conversions from real PyTorch, for tests/golden/conversions_torch.json.

Floating values that int64 cannot hold (NaN, +-inf, |x| >= 2^63) convert to INT64_MIN on x86 in
PyTorch's CPU kernels; sum(dtype=int64) converts each element before summing; floating to bool is
x != 0. Each case records the input (non-finite values as the strings "nan", "inf", "-inf", as in
print_cases.json) and what copy_/_to_copy and sum give.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/conversions_reference.py
"""
import json
import math
import sys

import torch

VALUES = [float("nan"), float("inf"), float("-inf"), 1e19, -1e19, 9.3e18, -9.3e18, 9.2e18, -9.2e18,
          -9223372036854775808.0, 9223372036854775807.0, 2.5, -2.5, 0.99, -0.99, -0.0, 0.0, 1e-300]


def encode(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def main():
    out = {"casts": [], "sums": []}
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor(VALUES, dtype=dtype)
        to_int = x.to(torch.int64)
        copied = torch.empty(len(VALUES), dtype=torch.int64).copy_(x)
        assert to_int.tolist() == copied.tolist()
        out["casts"].append({
            "dtype": str(dtype).replace("torch.", ""),
            "values": [encode(v) for v in x.tolist()],
            "int64": to_int.tolist(),
            "bool": x.to(torch.bool).tolist(),
        })
    sums = [[1.5, 2.5], [float("nan")], [float("inf"), 1.0], [float("-inf"), -1.0], [1e19], [-2.5, -0.5, 4.75]]
    for dtype in (torch.float32, torch.float64):
        for values in sums:
            x = torch.tensor(values, dtype=dtype)
            out["sums"].append({
                "dtype": str(dtype).replace("torch.", ""),
                "values": [encode(v) for v in values],
                "sum_int64": x.sum(dtype=torch.int64).item(),
                "sum_dim0_int64": x.sum(0, dtype=torch.int64).item(),
                "sum_bool": x.sum(dtype=torch.bool).item(),
            })
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
