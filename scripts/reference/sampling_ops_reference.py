#!/usr/bin/env python3
"""Seeded draws of exponential_ and multinomial from a torch.Generator, for
tests/ops/test_sampling_ops.cpp (golden: tests/golden/sampling_ops_torch.json).

Each case seeds a fresh generator and makes `calls` calls in a row on it, so the golden also fixes
how many numbers each call takes from the generator. Probabilities are written into the golden as
the float32 / float64 values PyTorch saw ("inputs", by case name), so the C++ test feeds the same inputs.
Run:  /usr/bin/python3 scripts/reference/sampling_ops_reference.py   (Debian's PyTorch 1.13, no MKL:
its exponential_ takes the default CPU path, the one PyTorch 2.8 builds; ops/native/distributions.h)
"""
import json
import os

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "golden", "sampling_ops_torch.json")
SEEDS = [0, 1, 42, 1234]


def probs(shape, dtype, kind):
    """Deterministic inputs: 'uniform' weights, a 'softmax' row of logits, or 'sparse' (zeros in it)."""
    g = torch.Generator().manual_seed(99)
    if kind == "uniform":
        return torch.rand(shape, generator=g, dtype=torch.float64).to(dtype)
    if kind == "softmax":
        return torch.softmax(torch.randn(shape, generator=g, dtype=torch.float64) * 3, dim=-1).to(dtype)
    p = torch.rand(shape, generator=g, dtype=torch.float64)
    p[p < 0.6] = 0.0
    p[..., 0] = 0.5  # no all-zero row
    return p.to(dtype)


MULTINOMIAL = [  # name, shape, dtype, kind, num_samples, replacement
    ("one_of_8", [8], torch.float32, "uniform", 1, False),
    ("three_of_8", [8], torch.float32, "uniform", 3, False),
    ("rows_one", [4, 10], torch.float32, "uniform", 1, False),
    ("rows_five", [4, 10], torch.float64, "uniform", 5, False),
    ("sparse_one", [3, 12], torch.float32, "sparse", 1, False),
    ("vocab_one", [512], torch.float32, "softmax", 1, False),
    ("replacement_30", [6], torch.float32, "uniform", 30, True),
    ("rows_replacement_9", [3, 7], torch.float64, "sparse", 9, True),
    ("vocab_replacement_4", [512], torch.float32, "softmax", 4, True),
]
EXPONENTIAL = [  # name, shape, dtype, lambd
    ("f32_7", [7], torch.float32, 1.0),
    ("f64_5_rate_2.5", [5], torch.float64, 2.5),
    ("f32_3x4_rate_0.5", [3, 4], torch.float32, 0.5),
]
NAMES = {torch.float32: "float32", torch.float64: "float64"}


def main():
    cases = []
    inputs = {name: probs(shape, dtype, kind).flatten().tolist() for name, shape, dtype, kind, _, _ in MULTINOMIAL}
    for seed in SEEDS:
        for name, shape, dtype, lambd in EXPONENTIAL:
            g = torch.Generator().manual_seed(seed)
            draws = [torch.empty(shape, dtype=dtype).exponential_(lambd, generator=g) for _ in range(2)]
            cases.append({"op": "exponential_", "name": name, "seed": seed, "shape": shape, "dtype": NAMES[dtype],
                          "lambd": lambd, "calls": [d.flatten().tolist() for d in draws]})
        for name, shape, dtype, kind, n, replacement in MULTINOMIAL:
            p = probs(shape, dtype, kind)
            g = torch.Generator().manual_seed(seed)
            draws = [torch.multinomial(p, n, replacement, generator=g) for _ in range(3)]
            cases.append({"op": "multinomial", "name": name, "seed": seed, "shape": shape, "dtype": NAMES[dtype],
                          "num_samples": n, "replacement": replacement,
                          "out_shape": list(draws[0].shape), "calls": [d.flatten().tolist() for d in draws]})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"torch_version": torch.__version__, "mkl": torch.backends.mkl.is_available(), "inputs": inputs,
                   "cases": cases}, f)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, ROOT), len(cases), "cases")


if __name__ == "__main__":
    main()
