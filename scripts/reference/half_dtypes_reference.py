#!/usr/bin/env python3
"""float16 and bfloat16 facts from PyTorch, for tests/golden/half_dtypes_torch.json.

Needs torch (Debian's python3-torch, 1.13, is enough: its Half and BFloat16 conversions and
promotion rules are 2.8's). The file has:
  * "round": float32 inputs (bit patterns in hex) and the float16 and bfloat16 bit patterns PyTorch's
    .to() gives: ties at every exponent, the overflow thresholds, subnormals and their ties, zeros,
    infinities, NaNs, and a fixed sample of random float32 bit patterns;
  * "from_float64" and "from_int64": inputs converted directly (c10 goes through float);
  * "promote": torch.promote_types over bool, int8, int64, float16, bfloat16, float32, float64;
  * "ops": a few op results in float16 and bfloat16 (inputs and outputs as bit patterns), each computed
    by PyTorch's CPU kernels (in float, rounded once);
  * "repr": how PyTorch prints float16 and bfloat16 tensors.

Run:  python3 scripts/reference/half_dtypes_reference.py > tests/golden/half_dtypes_torch.json
"""
import json
import random
import struct

import torch


def f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def bits16(t):
    return [int(v) & 0xFFFF for v in t.view(torch.int16).reshape(-1).tolist()]


def bits32_hex(t):
    return ["%08X" % (int(v) & 0xFFFFFFFF) for v in t.view(torch.int32).reshape(-1).tolist()]


def round_inputs():
    bits = set()
    for e in range(90, 160):  # exponents from far below float16's subnormals to far above its range
        base = e << 23
        for m in (0, 1, 0x1000, 0x0FFF, 0x1001, 0x3000, 0x2000, 0x8000, 0x7FFF, 0x8001, 0x18000, 0x7FFFFF, 0x400000):
            bits.add(base | m)
    # float16's overflow threshold 65520 and its neighbours; bfloat16's largest values.
    for b in (0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF):
        bits.add(b)
    # float32 subnormals, zeros, infinities, NaNs (quiet, signalling, with payloads).
    for b in (0, 1, 0x7FFFFF, 0x400000, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FC12345, 0x7FFFFFFF):
        bits.add(b)
    rng = random.Random(30)
    for _ in range(3000):
        bits.add(rng.getrandbits(31))
    out = sorted(bits)
    return out + [b | 0x80000000 for b in out]


def main():
    inputs = round_inputs()
    x = torch.tensor(inputs, dtype=torch.int64).to(torch.int32).view(torch.float32)
    h = bits16(x.to(torch.float16))
    bf = bits16(x.to(torch.bfloat16))
    golden = {"source": "scripts/reference/half_dtypes_reference.py (torch %s)" % torch.__version__}
    golden["round"] = [["%08X" % b, h[i], bf[i]] for i, b in enumerate(inputs)]

    doubles = [1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8 + 2.0**-40, 65519.999999, 65520.0, 1e-300, -2.0**-25 - 2.0**-60,
               0.1, 3.141592653589793, 1e39, -1e39]
    d = torch.tensor(doubles, dtype=torch.float64)
    golden["from_float64"] = [[struct.unpack("<Q", struct.pack("<d", v))[0].to_bytes(8, "big").hex().upper(), a, b]
                              for v, a, b in zip(doubles, bits16(d.to(torch.float16)), bits16(d.to(torch.bfloat16)))]
    ints = [0, 1, -1, 2049, 2051, 65504, 65519, 65520, 100000, 16777217, 257, 1 << 40, -(1 << 62)]
    i = torch.tensor(ints, dtype=torch.int64)
    golden["from_int64"] = [[v, a, b] for v, a, b in zip(ints, bits16(i.to(torch.float16)), bits16(i.to(torch.bfloat16)))]

    names = ["bool", "int8", "int64", "float16", "bfloat16", "float32", "float64"]
    dtypes = [getattr(torch, n) for n in names]
    golden["promote"] = [[a, b, str(torch.promote_types(da, db)).replace("torch.", "")]
                         for a, da in zip(names, dtypes) for b, db in zip(names, dtypes)]

    rng = random.Random(7)
    a_vals = [rng.uniform(-3, 3) for _ in range(12)]
    b_vals = [rng.uniform(0.5, 2) for _ in range(12)]
    ops = []
    for dtype_name in ("float16", "bfloat16"):
        dt = getattr(torch, dtype_name)
        a = torch.tensor(a_vals, dtype=torch.float32).to(dt).reshape(3, 4)
        b = torch.tensor(b_vals, dtype=torch.float32).to(dt).reshape(3, 4)
        computations = {
            "add": lambda: a + b, "sub_alpha": lambda: torch.sub(a, b, alpha=3), "mul": lambda: a * b,
            "div": lambda: a / b, "exp": lambda: torch.exp(a), "relu": lambda: torch.relu(a), "neg": lambda: -a,
            "sum": lambda: a.sum(), "sum_dim1": lambda: a.sum(1), "mean_dim0": lambda: a.mean(0),
            "softmax_dim1": lambda: torch.softmax(a, 1), "mul_scalar": lambda: a * 0.1,
            "add_float32": lambda: a + b.float(), "matmul": lambda: a @ b.t(),
        }
        for name, compute in computations.items():
            try:
                r = compute()
            except RuntimeError as e:  # torch 1.13 lacks some Half CPU kernels (exp, mm) that 2.8 has
                ops.append({"dtype": dtype_name, "op": name, "error": str(e)})
                continue
            entry = {"dtype": dtype_name, "op": name, "out_dtype": str(r.dtype).replace("torch.", ""),
                     "a": bits16(a), "b": bits16(b), "shape": list(r.shape)}
            entry["out"] = bits16(r) if r.dtype in (torch.float16, torch.bfloat16) else bits32_hex(r)
            ops.append(entry)
    # A long sum: float accumulation (a float16 accumulator would stop growing at 2048).
    long = torch.ones(5000, dtype=torch.float16)
    ops.append({"dtype": "float16", "op": "sum_ones_5000", "out": bits16(long.sum())})
    golden["ops"] = ops
    golden["repr"] = [
        repr(torch.tensor([1.5, -2.0, 0.1], dtype=torch.float16)),
        repr(torch.tensor([1.5, -2.0, 0.1], dtype=torch.bfloat16)),
        repr(torch.tensor([[65504.0, 1e-7], [float("inf"), float("nan")]], dtype=torch.float16)),
        repr(torch.tensor(3.0, dtype=torch.bfloat16)),
    ]
    print(json.dumps(golden, indent=0))


if __name__ == "__main__":
    main()
