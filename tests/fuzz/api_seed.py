#!/usr/bin/env python3
"""tests/fuzz/api_seed.py: writes API-fuzzer inputs from their readable form, so seeds are reviewable.

Each tests/fuzz/api_seeds/NAME.txt becomes tests/fuzz/corpus/api/NAME (the byte code of
Note [The API fuzzer's byte code] in tests/fuzz/api_fuzzer.cpp). One instruction a line, '#' starts
a comment, %N is pool slot N (0-7):

  make %0 float32 cpu [2,3] randn          fill: randn zeros ones full(V) values(V,...) ramp(N) uniform empty ints(I,...)
  undefined %1
  view %1 t %0 | view %1 transpose %0 D0 D1 | view %1 expand %0 [SIZES] | view %1 detach %0
  view %1 unsqueeze %0 D | view %1 squeeze %0 D | view %1 as_strided %0 [SIZES] [STRIDES] OFFSET|None
  wrap %1 %0 logging|aliasing [requires_grad]
  requires_grad %0 [false]
  mode counter|keeping|pop|recording|fake            grad_mode no_grad|enable_grad|pop|inference
  call %2 aten::add.Tensor %0 %1 1          arguments: %N, [%N,...], None, default, 1, 0.5, nan, inf,
                                            true, [1,2], float32|float64|int64|bool, cpu|meta, "text",
                                            @N (custom object N: a call's object return goes to dst mod 4), stop
  composite %2 NAME %0 [%1 ...] [OPERANDS]  (the operands of each kind: COMPOSITES below)
  backward %2 [gradient=ones|zeros|%N] [retain=true|false] [create_graph] [with %N]
  access %0 item|to_vector<float>|to_vector<double>|to_vector<int64>|to_vector<bool>|data_ptr|raw_data|str|print
  grad %0 read %1 | grad %0 none | grad %0 set %1 | grad %0 zeros
  gradcheck undefined                       (a function returning an undefined tensor)
  trace                                     drop %0          copy %0 %1

  api_seed.py [--check]   writes every seed (or, with --check, fails if one is out of date)
  api_seed.py FILE.txt    prints the bytes of one program as hex
"""
import math
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = HERE / "api_seeds"
CORPUS = HERE / "corpus" / "api"

OPCODES = {"make": 0, "undefined": 1, "view": 2, "wrap": 3, "requires_grad": 4, "mode": 5, "grad_mode": 6,
           "call": 8, "composite": 9, "backward": 10, "access": 11, "grad": 12, "gradcheck": 13, "trace": 14,
           "drop": 15, "copy": 15}
DTYPE_CLASS = {"float32": 0, "float64": 1, "int64": 2, "bool": 3,      # dtype_value(b), api_bytes.h
               "int8": 0xF0, "float8_e4m3fn": 0xF1}
DTYPE_ENUM = {"bool": 0, "int64": 1, "float32": 2, "float64": 3,       # strata's ScalarType
              "int8": 4, "float8_e4m3fn": 5}
EXPLICIT = 0xF8
SMALL_SIZES = {2: 0, 3: 1, 1: 2, 0: 3, 4: 4, 5: 5, 7: 6, 16: 7}        # size_value's table
MAX_ELEMENTS = 1 << 16
VIEW_KINDS = {"t": 0, "transpose": 1, "expand": 2, "as_strided": 3, "unsqueeze": 5, "squeeze": 6, "detach": 7}
ACCESS_KINDS = {"item": 0, "to_vector<float>": 1, "to_vector<double>": 2, "to_vector<int64>": 3, "to_vector<bool>": 4,
                "data_ptr": 5, "raw_data": 7, "str": 8, "print": 9}
# name -> (kind, arity, operand kinds), in read_composite's order (api_composites.cpp).
COMPOSITES = {
    "reshape": (0, 1, ["shape"]), "contiguous": (1, 1, []), "sum_to": (2, 1, ["sum_to_shape"]), "to": (3, 1, ["dtype"]),
    "linear": (4, 3, ["flag"]), "matmul": (5, 2, []), "cross_entropy": (6, 2, ["loss"]), "nll_loss": (8, 2, ["loss"]), "log_softmax": (7, 1, ["int", "opt_dtype"]), "relu": (9, 1, []),
    "operator+": (10, 2, []), "operator-": (11, 2, []), "operator*": (12, 2, []), "operator/": (13, 2, []),
    "neg": (14, 1, []), "detach": (15, 1, []), "mul_scalar": (16, 1, ["scalar"]), "add": (17, 2, ["scalar"]),
    "add_": (18, 2, ["scalar"]), "mul_": (19, 2, []), "mm": (20, 2, []), "addmm": (21, 3, ["scalar", "scalar"]),
    "_log_softmax": (23, 1, ["int", "flag"]), "clone": (24, 1, []), "fill_": (25, 1, ["scalar"]), "zero_": (26, 1, []),
    "copy_": (27, 2, []), "exp": (28, 1, []), "sum": (31, 1, ["opt_dtype"]),
    # The inference composites (read_inference_composite): kind bytes 0xE0 and up.
    "softmax": (0xE0, 1, ["int", "opt_dtype"]), "dropout": (0xE1, 1, ["byte"]), "embedding": (0xE2, 2, ["byte"]),
    "gelu": (0xE3, 1, ["flag"]), "max_dim": (0xE4, 1, ["int", "flag"]), "native_dropout": (0xE5, 1, ["byte"]),
    "argmax": (0xE7, 1, ["byte"]),
}


def i64(v):
    return bytes([EXPLICIT]) + struct.pack("<q", v)


def f64(v):
    return bytes([EXPLICIT]) + struct.pack("<d", v)


def size(v):
    return bytes([SMALL_SIZES[v]]) if v in SMALL_SIZES else i64(v)


def slot(tok):
    if not tok.startswith("%"):
        raise ValueError(f"expected a slot %N, got {tok!r}")
    return int(tok[1:]) % 8


def int_list(tok):
    inner = tok.strip("[]").strip()
    return [] if not inner else [int(eval(x)) for x in inner.split(",")]  # 2**31 is allowed


def number(tok):
    special = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    return special[tok] if tok in special else float(eval(tok))


def scalar(tok):
    if tok in ("true", "false"):
        return bytes([2, 1 if tok == "true" else 0])
    if tok.lstrip("-").isdigit():
        return bytes([0]) + i64(int(tok))
    return bytes([1]) + f64(number(tok))


def argument(tok):
    """One argument of a call, spelled exactly (0xF0 + kind)."""
    if tok.startswith("[%"):
        slots = [slot(t) for t in tok.strip("[]").split(",")]
        return bytes([0xFB, len(slots)] + slots)
    if tok.startswith("%"):
        return bytes([0xF1, slot(tok)])
    if tok == "None":
        return bytes([0xF0])
    if tok.startswith("@"):
        return bytes([0xFD, int(tok[1:])])
    if tok == "default":
        return bytes([0xFA])
    if tok == "stop":
        return bytes([0xFE])
    if tok in ("true", "false"):
        return bytes([0xF4, 1 if tok == "true" else 0])
    if tok in DTYPE_ENUM:
        return bytes([0xF6, DTYPE_ENUM[tok]])
    if tok in ("cpu", "meta"):
        return bytes([0xF7, 0 if tok == "cpu" else 1])
    if tok in ("contiguous", "preserve"):
        return bytes([0xF8, 0 if tok == "contiguous" else 1])
    if tok.startswith('"'):
        text = tok.strip('"').encode().decode("unicode_escape").encode("latin-1")  # "\xcd" is one byte
        return bytes([0xF9, len(text)]) + text
    if tok.startswith("["):
        values = int_list(tok)
        return bytes([0xF5, len(values)]) + b"".join(struct.pack("<q", v) for v in values)
    if tok.lstrip("-").isdigit():
        return bytes([0xF2]) + struct.pack("<q", int(tok))
    return bytes([0xF3]) + struct.pack("<d", number(tok))


def make(args):
    dst, dtype, device, shape, fill = slot(args[0]), args[1], args[2], int_list(args[3]), args[4]
    out = bytes([dst, DTYPE_CLASS[dtype], 7 if device == "meta" else 0, len(shape)]) + b"".join(size(s) for s in shape)
    name, _, rest = fill.partition("(")
    values = [v for v in rest.rstrip(")").split(",") if v]
    kinds = {"randn": 0, "zeros": 1, "full": 2, "values": 3, "ramp": 4, "uniform": 5, "empty": 6, "ints": 7, "ones": 2}
    out += bytes([kinds[name]])
    numel = math.prod(shape)
    if device == "meta" or not 0 < numel <= MAX_ELEMENTS or any(s < 0 for s in shape):
        return out  # fill() runs only on a fresh, small CPU tensor
    floating = dtype.startswith("float")
    if name in ("full", "ones"):
        v = "1" if name == "ones" else values[0]
        out += f64(number(v)) if floating else i64(int(v))
    elif name in ("values", "ramp", "ints"):
        count = len(values) if name != "ramp" else int(values[0])
        out += bytes([count - 1])
        if name == "values":
            out += b"".join(f64(number(v)) for v in values)
        elif name == "ints":
            out += b"".join(i64(int(v)) for v in values)
    return out


def view(args):
    dst, kind, src = slot(args[0]), args[1], slot(args[2])
    out = bytes([dst, src, VIEW_KINDS[kind]])
    rest = args[3:]
    if kind == "transpose":
        out += i64(int(rest[0])) + i64(int(rest[1]))
    elif kind in ("unsqueeze", "squeeze"):
        out += i64(int(rest[0]))
    elif kind == "expand":
        target = int_list(rest[0])
        out += bytes([0x80 | len(target)]) + b"".join(size(s) for s in target)
    elif kind == "as_strided":
        sizes, strides = int_list(rest[0]), int_list(rest[1])
        out += bytes([len(sizes)]) + b"".join(size(s) + i64(st) for s, st in zip(sizes, strides))
        out += bytes([1]) if rest[2] == "None" else bytes([0]) + i64(int(rest[2]))
    return out


def composite(args):
    dst, name = slot(args[0]), args[1]
    kind, arity, operands = COMPOSITES[name]
    srcs = [slot(t) for t in args[2:2 + arity]]
    literals = args[2 + arity:]
    out = bytes([dst, srcs[0], kind])
    for op, tok in zip(operands, literals):
        if op in ("shape", "sum_to_shape"):
            values = int_list(tok)
            out += (bytes([3]) if op == "sum_to_shape" else b"") + bytes([3, len(values)]) + b"".join(size(v) for v in values)
        elif op == "dtype":
            out += bytes([DTYPE_CLASS[tok]])
        elif op == "opt_dtype":
            out += bytes([0 if tok == "None" else 3 * DTYPE_CLASS[tok] + 1])
        elif op == "loss":  # no weight, default ignore_index; the reduction
            out += bytes([{"none": 0, "mean": 2, "sum": 4}[tok]])
        elif op == "flag":
            out += bytes([1 if tok == "true" else 0])
        elif op == "byte":  # read as the composite reads it (api_composites.cpp)
            out += bytes([int(tok, 0)])
        elif op == "int":
            out += i64(int(tok))
        elif op == "scalar":
            out += scalar(tok)
    if len(literals) != len(operands):
        raise ValueError(f"composite {name} takes operands {operands}, got {literals}")
    return out + bytes(srcs[1:])


def backward(args):
    root, flags, extra = slot(args[0]), 0, b""
    gradient, second = None, None
    for tok in args[1:]:
        if tok.startswith("gradient="):
            gradient = tok.split("=")[1]
        elif tok.startswith("retain="):
            flags |= (1 if tok.endswith("true") else 2) << 2
        elif tok == "create_graph":
            flags |= 0x10
        elif tok == "with":
            second = True
        elif second is True:
            second = slot(tok)
    if gradient == "ones":
        flags |= 1
    elif gradient == "zeros":
        flags |= 3
    elif gradient is not None:
        flags |= 2
        extra += bytes([slot(gradient)])
    if second is not None:
        flags |= 0x20
        extra += bytes([second])
    return bytes([root, flags]) + extra


def assemble(text):
    out = bytearray()
    for number_, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        op, *args = line.replace(", ", ",").split()
        try:
            out.append(OPCODES[op])
            if op == "make":
                out += make(args)
            elif op == "undefined":
                out.append(slot(args[0]))
            elif op == "view":
                out += view(args)
            elif op == "wrap":
                out += bytes([slot(args[0]), slot(args[1]), (args[2] == "aliasing") | (2 if "requires_grad" in args else 0)])
            elif op == "requires_grad":
                out += bytes([slot(args[0]), 0 if "false" in args else 1])
            elif op == "mode":
                out.append({"counter": 0, "keeping": 1, "pop": 2, "recording": 3, "fake": 4}[args[0]])
            elif op == "grad_mode":
                out.append({"no_grad": 0, "enable_grad": 1, "pop": 2, "inference": 3}[args[0]])
            elif op == "call":
                name = args[1].encode()
                out += bytes([len(name)]) + name + bytes([slot(args[0])]) + b"".join(argument(t) for t in args[2:])
            elif op == "composite":
                out += composite(args)
            elif op == "backward":
                out += backward(args)
            elif op == "access":
                out += bytes([slot(args[0]), ACCESS_KINDS[args[1]]])
            elif op == "grad":
                kind = {"read": 0, "none": 1, "set": 2, "zeros": 3}[args[1]]
                out += bytes([slot(args[0]), kind]) + (bytes([slot(args[2])]) if kind in (0, 2) else b"")
            elif op == "gradcheck":
                out += bytes([0, 1, 1, 0xFF])  # one input of sizes [2]; a function returning Tensor()
            elif op == "drop":
                out += bytes([0, slot(args[0]), 0])
            elif op == "copy":
                out += bytes([1, slot(args[0]), slot(args[1])])
        except (KeyError, IndexError, ValueError) as e:
            raise SystemExit(f"line {number_}: cannot read {line!r}: {e!r}")
    return bytes(out)


def main(argv):
    if argv and argv[0].endswith(".txt"):
        print(assemble(pathlib.Path(argv[0]).read_text()).hex(" "))
        return 0
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("*.txt")):
        data = assemble(source.read_text())
        target = CORPUS / source.stem
        if check:
            if not target.exists() or target.read_bytes() != data:
                stale.append(target.name)
        else:
            target.write_bytes(data)
    if stale:
        print("out of date (run tests/fuzz/api_seed.py):", " ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
