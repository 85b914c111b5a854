#!/usr/bin/env python3
"""The deterministic Llama weights of docs/lm.md (issue 30) and writers of the checkpoint formats
strata-lm reads: llama2.c's v0 float32 `.bin`, llama2.c's int8 version-2 `.bin` (runq.c) and a
Hugging Face folder (config.json + model.safetensors in float32, float16 or bfloat16).

The generator (tests/lm/synthetic_weights.h computes the same numbers bit for bit):
  splitmix64(x), name_seed(name) = FNV-1a 64 of the UTF-8 name,
  u(name, i) = float32(splitmix64(name_seed(name) + i) >> 40) * 2^-23 - 1   (exact, in [-1, 1)),
  2-D [out, in]: u * float32(0.5 / sqrt(in)) (float32 product); 1-D norms: 1 + 0.125 * u (float32).
Tensors are kept under their Hugging Face names in the Meta/llama2.c layout of q and k (rotary pairs
(2i, 2i+1) within a head); only the HF writer permutes q/k rows into the rotate-half layout.

Only numpy is needed (no torch). Run:
  python3 scripts/reference/lm_weights.py tiny --bin /tmp/tiny.bin
  python3 scripts/reference/lm_weights.py tiny_gqa --hf /tmp/tiny_gqa_hf --dtype bfloat16 \
      --tokenizer tests/lm/data/tok512.model
  python3 scripts/reference/lm_weights.py stories15M --bin /tmp/s15.bin --int8 /tmp/s15_q80.bin
  python3 scripts/reference/lm_weights.py tiny --samples tests/golden/lm/weights_samples.json
"""
import argparse
import json
import math
import os
import shutil
import struct

import numpy as np

# Model configs of docs/lm.md: llama2.c's header fields plus whether the classifier is tied.
CONFIGS = {
    "tiny": dict(dim=64, hidden_dim=192, n_layers=2, n_heads=4, n_kv_heads=4, vocab_size=512,
                 seq_len=64, tied=True),
    "tiny_gqa": dict(dim=64, hidden_dim=192, n_layers=2, n_heads=8, n_kv_heads=2, vocab_size=512,
                     seq_len=64, tied=False),
    "stories15M": dict(dim=288, hidden_dim=768, n_layers=6, n_heads=6, n_kv_heads=6, vocab_size=32000,
                       seq_len=256, tied=True),
}
ROPE_THETA = 10000.0
RMS_EPS = 1e-5

MASK64 = (1 << 64) - 1


def name_seed(name):
    """FNV-1a 64 of the name's UTF-8 bytes."""
    h = 0xCBF29CE484222325
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def splitmix64(x):
    """splitmix64 over a numpy uint64 array (numpy's uint64 arithmetic wraps mod 2^64)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(name, count):
    """u(name, i) for i in [0, count) as float32."""
    with np.errstate(over="ignore"):
        idx = np.arange(count, dtype=np.uint64) + np.uint64(name_seed(name))
        bits = splitmix64(idx) >> np.uint64(40)
    return bits.astype(np.float32) * np.float32(2.0 ** -23) - np.float32(1.0)


def weight(name, shape):
    """One canonical tensor: 2-D scaled uniform or a 1-D norm weight around 1."""
    count = int(np.prod(shape))
    u = uniform(name, count).reshape(shape)
    if len(shape) == 2:
        scale = np.float32(0.5 / math.sqrt(shape[1]))  # double, rounded to float32 once
        return (u * scale).astype(np.float32)
    return (np.float32(1.0) + np.float32(0.125) * u).astype(np.float32)


def tensor_shapes(cfg):
    """(HF name, canonical shape) of every tensor, in a fixed order."""
    dim, hidden, vocab = cfg["dim"], cfg["hidden_dim"], cfg["vocab_size"]
    hs = dim // cfg["n_heads"]
    q_dim, kv_dim = cfg["n_heads"] * hs, cfg["n_kv_heads"] * hs
    out = [("model.embed_tokens.weight", [vocab, dim])]
    for l in range(cfg["n_layers"]):
        p = "model.layers.%d." % l
        out += [
            (p + "input_layernorm.weight", [dim]),
            (p + "self_attn.q_proj.weight", [q_dim, dim]),
            (p + "self_attn.k_proj.weight", [kv_dim, dim]),
            (p + "self_attn.v_proj.weight", [kv_dim, dim]),
            (p + "self_attn.o_proj.weight", [dim, q_dim]),
            (p + "post_attention_layernorm.weight", [dim]),
            (p + "mlp.gate_proj.weight", [hidden, dim]),
            (p + "mlp.up_proj.weight", [hidden, dim]),
            (p + "mlp.down_proj.weight", [dim, hidden]),
        ]
    out.append(("model.norm.weight", [dim]))
    if not cfg["tied"]:
        out.append(("lm_head.weight", [vocab, dim]))
    return out


def make_weights(cfg):
    """dict HF name -> float32 array, Meta layout for q/k."""
    return {name: weight(name, shape) for name, shape in tensor_shapes(cfg)}


def classifier(cfg, w):
    return w["model.embed_tokens.weight"] if cfg["tied"] else w["lm_head.weight"]


def layer_blocks(cfg, w, suffix):
    return [w["model.layers.%d.%s" % (l, suffix)] for l in range(cfg["n_layers"])]


# ---------------------------------------------------------------------------------------------
# llama2.c v0 float32 .bin (run.c's memory_map_weights order)

def header_ints(cfg):
    vocab = cfg["vocab_size"] if cfg["tied"] else -cfg["vocab_size"]
    return [cfg["dim"], cfg["hidden_dim"], cfg["n_layers"], cfg["n_heads"], cfg["n_kv_heads"], vocab,
            cfg["seq_len"]]


def write_bin_v0(path, cfg, w):
    hs = cfg["dim"] // cfg["n_heads"]
    blocks = [w["model.embed_tokens.weight"]]
    for suffix in ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                   "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                   "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.down_proj.weight",
                   "mlp.up_proj.weight"]:
        blocks += layer_blocks(cfg, w, suffix)
    blocks.append(w["model.norm.weight"])
    legacy = np.zeros(cfg["seq_len"] * hs // 2, dtype=np.float32)  # freq_cis_real / _imag, skipped
    blocks += [legacy, legacy]
    if not cfg["tied"]:
        blocks.append(w["lm_head.weight"])
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", *header_ints(cfg)))
        for b in blocks:
            f.write(np.ascontiguousarray(b, dtype="<f4").tobytes())


# ---------------------------------------------------------------------------------------------
# llama2.c int8 version-2 .bin (export.py's version2_export layout, read by runq.c)

def quantize_q80(w, group):
    """Symmetric int8 per group of `group` consecutive elements: q = round(w / s), s = max|w| / 127,
    all in float32, rounding half to even (torch.round)."""
    g = w.astype(np.float32).reshape(-1, group)
    scale = (np.abs(g).max(axis=1) / np.float32(127.0)).astype(np.float32)
    q = np.round(g / scale[:, None]).astype(np.int8)  # np.round: half to even, as torch.round
    return q.reshape(-1), scale


def write_bin_q80(path, cfg, w, group=64):
    while cfg["dim"] % group != 0:  # export.py's back-off
        group //= 2
    quantized = [w["model.embed_tokens.weight"]]
    for suffix in ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                   "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.down_proj.weight",
                   "mlp.up_proj.weight"]:
        quantized += layer_blocks(cfg, w, suffix)
    if not cfg["tied"]:
        quantized.append(w["lm_head.weight"])
    for t in quantized:
        assert t.size % group == 0, (t.shape, group)
    head = struct.pack("<Ii", 0x616B3432, 2)  # magic "ak42", version 2
    head += struct.pack("<7i", cfg["dim"], cfg["hidden_dim"], cfg["n_layers"], cfg["n_heads"],
                        cfg["n_kv_heads"], cfg["vocab_size"], cfg["seq_len"])
    head += struct.pack("<B", int(cfg["tied"])) + struct.pack("<i", group)  # unaligned, as export.py
    head += b"\0" * (256 - len(head))
    with open(path, "wb") as f:
        f.write(head)
        for t in (layer_blocks(cfg, w, "input_layernorm.weight")
                  + layer_blocks(cfg, w, "post_attention_layernorm.weight") + [w["model.norm.weight"]]):
            f.write(t.astype("<f4").tobytes())
        for t in quantized:
            q, s = quantize_q80(t, group)
            f.write(q.tobytes())
            f.write(s.astype("<f4").tobytes())


def dequantize_q80(w, group=64):
    """What runq.c's weights are worth in float32 (for tolerances against the float model)."""
    q, s = quantize_q80(w, group)
    return (q.reshape(-1, group).astype(np.float32) * s[:, None]).reshape(w.shape)


# ---------------------------------------------------------------------------------------------
# Hugging Face folder

def permute_meta_to_hf(w, n_heads):
    """Rows of q/k from rotary pairs (2i, 2i+1) to halves (i, i + hs/2) within each head, as
    convert_llama_weights_to_hf.py's permute: view(n, hs/2, 2, in).transpose(1, 2)."""
    rows, cols = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols)


def permute_hf_to_meta(w, n_heads):
    rows, cols = w.shape
    return w.reshape(n_heads, 2, rows // n_heads // 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols)


def hf_tensors(cfg, w):
    """dict HF name -> float32 array in HF's layout (q/k permuted)."""
    out = {}
    for name, t in w.items():
        if name.endswith("self_attn.q_proj.weight"):
            t = permute_meta_to_hf(t, cfg["n_heads"])
        elif name.endswith("self_attn.k_proj.weight"):
            t = permute_meta_to_hf(t, cfg["n_kv_heads"])
        out[name] = np.ascontiguousarray(t)
    return out


def to_bfloat16_bits(a):
    """float32 -> bfloat16 bit patterns with round-to-nearest-even (PyTorch's conversion)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    assert np.all(np.isfinite(a))
    return rounded.astype(np.uint16)


def bfloat16_bits_to_float32(b):
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


ST_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}


def encode_dtype(a, dtype):
    """Raw little-endian bytes of a float32 array converted to dtype."""
    if dtype == "float32":
        return a.astype("<f4").tobytes()
    if dtype == "float16":
        return a.astype("<f2").tobytes()  # numpy rounds to nearest even, as PyTorch
    return to_bfloat16_bits(a).astype("<u2").tobytes()


def round_to_dtype(a, dtype):
    """The float32 value of each element after a round trip through dtype."""
    if dtype == "float32":
        return a
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32)
    return bfloat16_bits_to_float32(to_bfloat16_bits(a)).reshape(a.shape)


def write_safetensors(path, tensors, dtype, metadata=None):
    """safetensors: u64 header length, JSON header (space-padded to 8), data; tensors sorted by name
    (all share one dtype, so this is the safetensors crate's order)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    data = []
    offset = 0
    for name in sorted(tensors, key=str.encode):
        raw = encode_dtype(tensors[name], dtype)
        header[name] = {"dtype": ST_DTYPES[dtype], "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in data:
            f.write(raw)


def hf_config(cfg, dtype):
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": cfg["dim"],
        "intermediate_size": cfg["hidden_dim"],
        "num_hidden_layers": cfg["n_layers"],
        "num_attention_heads": cfg["n_heads"],
        "num_key_value_heads": cfg["n_kv_heads"],
        "vocab_size": cfg["vocab_size"],
        "max_position_embeddings": cfg["seq_len"],
        "rms_norm_eps": RMS_EPS,
        "rope_theta": ROPE_THETA,
        "tie_word_embeddings": cfg["tied"],
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": dtype,
    }


def write_hf_folder(folder, cfg, w, dtype="float32", tokenizer=None):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config(cfg, dtype), f, indent=2)
        f.write("\n")
    tensors = hf_tensors(cfg, w)
    if cfg["tied"]:
        tensors.pop("lm_head.weight", None)  # HF drops a tied head from the file
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, dtype, {"format": "pt"})
    if tokenizer:
        shutil.copyfile(tokenizer, os.path.join(folder, "tokenizer.model"))


def to_json(obj, indent=""):
    """JSON with one line per dict key or list row, flat lists of scalars kept on one line."""
    inner = indent + " "
    if isinstance(obj, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k), to_json(v, inner)) for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(obj, list) and any(isinstance(v, (list, dict)) for v in obj):
        return "[\n" + ",\n".join(inner + to_json(v, inner) for v in obj) + "\n" + indent + "]"
    return json.dumps(obj, ensure_ascii=False)


def samples(configs=("tiny", "tiny_gqa")):
    """Spot values of the generator for tests/golden/lm/weights_samples.json: the hash and the
    uniform stream on their own, then per tensor its first and last elements (float32 bit patterns)
    and the float64 sum of all elements, so a second implementation can be checked bit for bit."""
    name = "model.embed_tokens.weight"
    seed = name_seed(name)
    with np.errstate(over="ignore"):
        mixed = splitmix64(np.array([0, 1, seed], dtype=np.uint64))
    out = {
        "name_seed": {name: "0x%016x" % seed, "": "0x%016x" % name_seed("")},
        "splitmix64": {"0x0": "0x%016x" % int(mixed[0]), "0x1": "0x%016x" % int(mixed[1]),
                       "0x%016x" % seed: "0x%016x" % int(mixed[2])},
        "u_bits": {name: ["0x%08x" % int(b) for b in uniform(name, 4).view(np.uint32)]},
        "configs": {},
    }
    bits = lambda a: ["0x%08x" % int(b) for b in a.view(np.uint32)]  # noqa: E731
    for c in configs:
        cfg = CONFIGS[c]
        out["configs"][c] = {
            n: {"shape": list(t.shape), "first": bits(t.reshape(-1)[:3]), "last": bits(t.reshape(-1)[-1:]),
                "sum": float(t.astype(np.float64).sum())}
            for n, t in make_weights(cfg).items()}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", choices=sorted(CONFIGS))
    ap.add_argument("--bin", help="write llama2.c's v0 float32 .bin here")
    ap.add_argument("--int8", help="write llama2.c's int8 version-2 .bin here")
    ap.add_argument("--hf", help="write a Hugging Face folder here")
    ap.add_argument("--dtype", default="float32", choices=sorted(ST_DTYPES), help="HF weights' dtype")
    ap.add_argument("--tokenizer", help="tokenizer.model copied into the HF folder")
    ap.add_argument("--samples", help="write the generator's spot values (JSON) here")
    args = ap.parse_args()
    if args.samples:
        with open(args.samples, "w") as f:
            f.write(to_json(samples()) + "\n")
    cfg = CONFIGS[args.config]
    w = make_weights(cfg)
    if args.bin:
        write_bin_v0(args.bin, cfg, w)
    if args.int8:
        write_bin_q80(args.int8, cfg, w)
    if args.hf:
        write_hf_folder(args.hf, cfg, w, args.dtype, args.tokenizer)


if __name__ == "__main__":
    main()
