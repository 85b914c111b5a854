#!/usr/bin/env python3
"""float8_e4m3fn conversions from the format's definition, for tests/golden/float8_e4m3fn.json.

PyTorch 1.13 (the torch installed here) has no float8 dtype, so the expected values are computed from
the format (OCP FP8 E4M3, PyTorch's torch.float8_e4m3fn) with exact rational arithmetic, not taken
from PyTorch:
  * a byte S.EEEE.MMM is (-1)^S * 2^(E-7) * (1 + M/8) for E > 0, (-1)^S * 2^-6 * M/8 for E = 0, and
    NaN for EEEE.MMM = 1111.111; there are no infinities.
  * float32 -> float8 is c10's plain conversion: round to nearest, ties to even mantissa, on the grid
    of finite values extended by one step past 448 (480 = 1111.111); a value that rounds to 480 or
    beyond, an infinity or a NaN gives NaN with the input's sign (0x7F, 0xFF). No saturation.
The file has "decode" (256 entries: the float value of each byte, null for NaN) and "encode" (float32
inputs as their bit patterns in hex, the byte expected): every finite value, every midpoint between
neighbours, a float32 step either side of each midpoint, overflow, infinities, NaNs, float32
subnormals.

Run:  python3 scripts/reference/float8_reference.py > tests/golden/float8_e4m3fn.json
"""
import json
import math
import struct
from fractions import Fraction


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def decode(byte):
    sign = -1 if byte & 0x80 else 1
    e, m = (byte >> 3) & 0xF, byte & 7
    if e == 0xF and m == 7:
        return None
    if e == 0:
        return sign * Fraction(m, 8) * Fraction(1, 64)
    return sign * (1 + Fraction(m, 8)) * Fraction(2) ** (e - 7)


def magnitude_of_code(code):  # code 0..127, with 127 standing for the virtual 480
    e, m = code >> 3, code & 7
    if e == 0:
        return Fraction(m, 8) * Fraction(1, 64)
    return (1 + Fraction(m, 8)) * Fraction(2) ** (e - 7)


GRID = [magnitude_of_code(c) for c in range(128)]  # increasing; GRID[127] == 480


def encode(bits):
    x = f32_from_bits(bits)
    sign = 0x80 if bits >> 31 else 0
    if math.isnan(x) or math.isinf(x):
        return sign | 0x7F
    a = abs(Fraction(x))
    if a >= GRID[127]:
        return sign | 0x7F
    hi = next(i for i, g in enumerate(GRID) if g >= a)
    if GRID[hi] == a:
        code = hi
    else:
        lo = hi - 1
        d_lo, d_hi = a - GRID[lo], GRID[hi] - a
        code = lo if d_lo < d_hi else hi if d_hi < d_lo else (lo if lo % 2 == 0 else hi)
    return sign | code  # code 127 is NaN's pattern: rounding to 480 is overflow


def main():
    inputs = set()
    for code in range(127):
        for s in (0, 1):
            v = float(GRID[code]) * (-1 if s else 1)
            inputs.add(f32_bits(v))
    for code in range(127):
        mid = float((GRID[code] + GRID[code + 1]) / 2)
        for s in (1.0, -1.0):
            b = f32_bits(s * mid)
            inputs.update({b, b - 1, b + 1})
    for v in (448.0, 449.0, 463.99, 464.0, 464.01, 479.0, 480.0, 500.0, 1e6, 3.4e38, 2.0 ** -10, 2.0 ** -11, 2.0 ** -12,
              1e-40, 1.4e-45, 0.3, 1.1, 3.14159, -0.0):
        inputs.update({f32_bits(v), f32_bits(-v)})
    inputs.update({0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x00000001, 0x007FFFFF})
    out = {
        "source": "scripts/reference/float8_reference.py (the format's definition; torch 1.13 has no float8)",
        "decode": [None if decode(b) is None else float(decode(b)) for b in range(256)],
        "encode": [["%08x" % b, encode(b)] for b in sorted(inputs)],
    }
    print(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
