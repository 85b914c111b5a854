#!/usr/bin/env python3
"""Reference safetensors files, written from the format description alone (no safetensors package,
which Debian lacks), for tests/golden/safetensors_*.safetensors.

The layout is what the safetensors crate's `prepare` and `Metadata` serialisation produce: an 8-byte
little-endian header length N; N bytes of compact JSON with "__metadata__" first (keys sorted here:
the crate keeps them in a hash map, so its order is only fixed for one key), then one entry per
tensor as {"dtype", "shape", "data_offsets"}, padded with spaces to a multiple of 8; then the data.
Tensors are ordered by descending dtype alignment (the crate's Dtype enum order, ascending:
BOOL, ..., F16, BF16, ..., F32, F64, I64), then by name (bytewise), and their data follows in that order from 0.
`write(..., crate_order=False)` keeps the given order instead, as other writers may: that puts data
at offsets misaligned for its element type, which a loader must copy.

Run:  python3 scripts/reference/make_safetensors.py tests/golden
"""
import json
import os
import struct
import sys

# dtype name -> (struct format of one element, rank in the crate's Dtype enum)
DTYPES = {"BOOL": ("?", 0), "F16": ("H", 9), "BF16": ("H", 10), "F32": ("I", 11), "F64": ("Q", 12), "I64": ("q", 13)}


def write(path, tensors, metadata=None, crate_order=True):
    """tensors: list of (name, dtype, shape, elements); floats are given as their bit patterns."""
    if crate_order:
        tensors = sorted(tensors, key=lambda t: (-DTYPES[t[1]][1], t[0].encode()))
    header = {}
    if metadata is not None:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata, key=str.encode)}
    data = b""
    for name, dtype, shape, elements in tensors:
        count = 1
        for s in shape:
            count *= s
        assert len(elements) == count, name
        raw = struct.pack("<%d%s" % (count, DTYPES[dtype][0]), *elements)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


# The tensors of each file. tests/nn/test_safetensors.cpp builds the same ones.
SMALL = [
    ("weight", "F32", [2, 3], [0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x00000001, 0x80000000]),
    ("bias", "F32", [3], [0x7FC00001, 0x3DCCCCCD, 0x7F7FFFFF]),
    ("steps", "I64", [], [-5]),
    ("table", "F64", [2, 2], [0x3FB999999999999A, 0xC004000000000000, 0x7FE1CCF385EBC8A0, 0x0000000000000001]),
    ("mask", "BOOL", [4], [True, False, False, True]),
    ("empty", "F32", [0, 4], []),
]
SMALL_METADATA = {"format": "pt", "source": "make_safetensors.py"}
MISALIGNED = [
    ("flags", "BOOL", [3], [True, True, False]),
    ("values", "F64", [2], [0x3FF0000000000000, 0xC000000000000000]),
]

# float16 and bfloat16 (IEEE binary16 and bfloat16, little-endian): 1, -2, 65504, inf, NaN, the smallest
# subnormal; bfloat16 1, -0, 3.39e38, NaN. tests/nn/test_safetensors_half.cpp builds the same ones.
HALF = [
    ("h", "F16", [2, 3], [0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x7E00, 0x0001]),
    ("bf", "BF16", [4], [0x3F80, 0x8000, 0x7F7F, 0x7FC0]),
    ("scale", "F32", [], [0x3E800000]),
    ("mask", "BOOL", [1], [True]),
]
HALF_METADATA = {"format": "pt"}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write(os.path.join(out, "safetensors_small.safetensors"), SMALL, SMALL_METADATA)
    write(os.path.join(out, "safetensors_misaligned.safetensors"), MISALIGNED, crate_order=False)
    write(os.path.join(out, "safetensors_half.safetensors"), HALF, HALF_METADATA)


if __name__ == "__main__":
    main()
