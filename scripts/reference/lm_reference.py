#!/usr/bin/env python3
"""The PyTorch reference Llama of issue 30 and the logits/sampling goldens in tests/golden/lm/.

The model is llama2.c's model.py math in plain torch (written here): RMSNorm (x * rsqrt(mean(x^2) +
eps) * w), rotary embedding on pairs (2i, 2i+1) of each head (Meta layout), causal attention with
grouped key/value heads expanded by repeat_kv, SwiGLU w2(silu(w1 x) * w3 x), final norm, tied or
separate head. A second forward takes Hugging Face's layout (q/k rows permuted, rotate_half on halves)
and reads the HF folder lm_weights.py writes, proving the permutation: both must agree.

Run (from the repository root; needs python3-torch and numpy):
  python3 scripts/reference/lm_reference.py logits     # tiny, tiny_gqa (+ float16/bfloat16 variants)
  python3 scripts/reference/lm_reference.py stories15M # the release-suite golden
  python3 scripts/reference/lm_reference.py sampling   # tests/golden/lm/sampling.json
  python3 scripts/reference/lm_reference.py runc /tmp/lm_run_harness [llama2.c/tokenizer.bin]
                                                       # run.c's greedy ids == the reference's
  python3 scripts/reference/lm_reference.py int8       # <config>_q80_logits.json (lm_int8.py)
  python3 scripts/reference/lm_reference.py runq /tmp/lm_runq_harness  # runq.c == lm_int8's emulation
"""
import json
import math
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lm_weights  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "lm")
POSITIONS = [0, 11, 23]


def prompt_tokens(vocab):
    """docs/lm.md's 24-token logits prompt."""
    return [1] + [(7 * j + 3) % (vocab - 3) + 3 for j in range(1, 24)]


# ---------------------------------------------------------------------------------------------
# The model

def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + lm_weights.RMS_EPS) * w


def rope_tables(hs, seq, dtype):
    """cos/sin [seq, hs/2] as model.py's precompute_freqs_cis."""
    freqs = 1.0 / (lm_weights.ROPE_THETA ** (torch.arange(0, hs, 2)[: hs // 2].to(dtype) / hs))
    angles = torch.outer(torch.arange(seq).to(dtype), freqs)
    return torch.cos(angles), torch.sin(angles)


def rope_pairs(x, cos, sin):
    """Meta layout: rotate (x[2i], x[2i+1]) by angle pos * f_i. x: [T, heads, hs]."""
    xr, xi = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.stack([xr * c - xi * s, xr * s + xi * c], dim=-1).flatten(2)


def rope_halves(x, cos, sin):
    """HF layout: x * cat(cos, cos) + rotate_half(x) * cat(sin, sin), rotate_half = cat(-x2, x1)."""
    c = torch.cat([cos, cos], dim=-1)[:, None, :]
    s = torch.cat([sin, sin], dim=-1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * c + rotated * s


def repeat_kv(x, n_rep):
    """[T, kv_heads, hs] -> [T, kv_heads * n_rep, hs], each kv head serving n_rep query heads."""
    if n_rep == 1:
        return x
    t, kvh, hs = x.shape
    return x[:, :, None, :].expand(t, kvh, n_rep, hs).reshape(t, kvh * n_rep, hs)


def forward(cfg, w, tokens, layout="meta", dtype=torch.float32, linear=None):
    """Logits [len(tokens), vocab] for one sequence from position 0. w: HF name -> tensor (layout's
    q/k row order). linear(x, name) replaces x @ w[name].T for every projection (int8 emulation)."""
    w = {k: v.to(dtype) for k, v in w.items()}
    mm = linear or (lambda x, name: x @ w[name].T)
    dim, nh, nkv = cfg["dim"], cfg["n_heads"], cfg["n_kv_heads"]
    hs = dim // nh
    t = len(tokens)
    cos, sin = rope_tables(hs, t, dtype)
    rope = rope_pairs if layout == "meta" else rope_halves
    mask = torch.triu(torch.full((t, t), float("-inf"), dtype=dtype), diagonal=1)
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for l in range(cfg["n_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, w[p + "input_layernorm.weight"])
        q = mm(h, p + "self_attn.q_proj.weight").view(t, nh, hs)
        k = mm(h, p + "self_attn.k_proj.weight").view(t, nkv, hs)
        v = mm(h, p + "self_attn.v_proj.weight").view(t, nkv, hs)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k, v = repeat_kv(k, nh // nkv), repeat_kv(v, nh // nkv)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [heads, T, hs]
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(hs) + mask
        att = torch.matmul(torch.softmax(scores, dim=-1), v)  # [heads, T, hs]
        x = x + mm(att.transpose(0, 1).reshape(t, nh * hs), p + "self_attn.o_proj.weight")
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(mm(h, p + "mlp.gate_proj.weight"))
        x = x + mm(gate * mm(h, p + "mlp.up_proj.weight"), p + "mlp.down_proj.weight")
    x = rms_norm(x, w["model.norm.weight"])
    return mm(x, "model.embed_tokens.weight" if cfg["tied"] else "lm_head.weight")


def canonical(cfg, dtype="float32"):
    """Canonical (Meta-layout) weights as torch float32, optionally rounded through dtype."""
    return {k: torch.from_numpy(lm_weights.round_to_dtype(v, dtype).copy())
            for k, v in lm_weights.make_weights(cfg).items()}


# ---------------------------------------------------------------------------------------------
# Reading back what lm_weights.py writes (independent parsers, so the files are checked too)

def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    out = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        buf = raw[base + a: base + b]
        if e["dtype"] == "F32":
            arr = np.frombuffer(buf, "<f4")
        elif e["dtype"] == "F16":
            arr = np.frombuffer(buf, "<f2").astype(np.float32)
        else:
            arr = lm_weights.bfloat16_bits_to_float32(np.frombuffer(buf, "<u2"))
        out[name] = torch.from_numpy(arr.reshape(e["shape"]).copy())
    return out


def read_hf_folder(folder):
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    cfg = dict(dim=c["hidden_size"], hidden_dim=c["intermediate_size"], n_layers=c["num_hidden_layers"],
               n_heads=c["num_attention_heads"], n_kv_heads=c["num_key_value_heads"],
               vocab_size=c["vocab_size"], seq_len=c["max_position_embeddings"],
               tied=c["tie_word_embeddings"])
    return cfg, read_safetensors(os.path.join(folder, "model.safetensors"))


def read_bin_v0(path, cfg):
    """Split a v0 .bin at run.c's offsets back into HF names (Meta layout)."""
    raw = np.fromfile(path, dtype="<f4")
    header = raw[:7].view("<i4").tolist()
    assert header == lm_weights.header_ints(cfg), header
    shapes = dict(lm_weights.tensor_shapes(cfg))
    pos = 7
    out = {}

    def take(name):
        nonlocal pos
        n = int(np.prod(shapes[name]))
        out[name] = torch.from_numpy(raw[pos:pos + n].reshape(shapes[name]).copy())
        pos += n

    take("model.embed_tokens.weight")
    for suffix in ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                   "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                   "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.down_proj.weight",
                   "mlp.up_proj.weight"]:
        for l in range(cfg["n_layers"]):
            take("model.layers.%d.%s" % (l, suffix))
    take("model.norm.weight")
    pos += cfg["seq_len"] * (cfg["dim"] // cfg["n_heads"])
    if not cfg["tied"]:
        take("lm_head.weight")
    assert pos == raw.size, (pos, raw.size)
    return out


# ---------------------------------------------------------------------------------------------
# Goldens

def fmt(x):
    return float("%.9g" % x)


def logits_golden(name, cfg, logits, tokens, n_keep, extra=None):
    all_logits = logits.double()
    top2 = torch.topk(all_logits, 2, dim=-1).values
    g = {
        "config": dict(cfg, name=name, rope_theta=lm_weights.ROPE_THETA, rms_norm_eps=lm_weights.RMS_EPS),
        "tokens": tokens,
        "positions": POSITIONS,
        "logits": [[fmt(v) for v in logits[p, :n_keep].tolist()] for p in POSITIONS],
        "argmax": torch.argmax(logits, dim=-1).tolist(),
        "argmax_margin_min": fmt((top2[:, 0] - top2[:, 1]).min().item()),
        "torch_version": torch.__version__,
    }
    if extra:
        g.update(extra)
    return g


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        f.write(lm_weights.to_json(obj) + "\n")
    assert json.load(open(path, encoding="utf-8")) == obj
    print("wrote", os.path.relpath(path))


def check_formats(cfg, w, tokens, ref):
    """Write the .bin and HF folders, read them back, and prove each gives the reference logits."""
    with tempfile.TemporaryDirectory() as tmp:
        np_w = {k: v.numpy() for k, v in w.items()}
        path = os.path.join(tmp, "m.bin")
        lm_weights.write_bin_v0(path, cfg, np_w)
        back = read_bin_v0(path, cfg)
        assert all(torch.equal(back[k], w[k]) for k in w), "v0 .bin round trip"
        worst = {}
        for dtype in ["float32", "float16", "bfloat16"]:
            folder = os.path.join(tmp, "hf_" + dtype)
            lm_weights.write_hf_folder(folder, cfg, np_w, dtype)
            hf_cfg, hf_w = read_hf_folder(folder)
            assert hf_cfg == cfg, (hf_cfg, cfg)
            if cfg["tied"]:
                assert "lm_head.weight" not in hf_w
            hf = forward(cfg, hf_w, tokens, layout="hf")
            meta = ref if dtype == "float32" else forward(cfg, canonical(cfg, dtype), tokens)
            diff = (hf - meta).abs().max().item()
            assert diff < 2e-5, (dtype, diff)
            assert torch.equal(hf.argmax(-1), meta.argmax(-1)), dtype
            worst[dtype] = diff
            if dtype == "float32":  # the check has power: unpermuted q/k under rotate_half differ
                wrong = forward(cfg, w, tokens, layout="hf")
                assert (wrong - ref).abs().max().item() > 1e-3
        return worst


def check_against_c(harness, bin_path, golden_name):
    """The harness's token-by-token logits (run.c or runq.c on bin_path) against a golden: returns
    the largest difference over the golden's positions; the argmax must agree at every position."""
    import subprocess
    with open(os.path.join(GOLDEN, golden_name)) as f:
        g = json.load(f)
    out = subprocess.run([harness, "logits", bin_path] + [str(t) for t in g["tokens"]], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    rows = np.array([[float(v) for v in line.split()] for line in out])
    assert rows.argmax(axis=1).tolist() == g["argmax"], golden_name
    diff = max(np.abs(rows[p, :len(g["logits"][i])] - np.array(g["logits"][i])).max()
               for i, p in enumerate(g["positions"]))
    assert diff < 1e-5, (golden_name, diff)
    print("%s: C logits within %.3g of %s" % (os.path.basename(harness), diff, golden_name))
    return diff


def make_logits(name, variants=True):
    cfg = lm_weights.CONFIGS[name]
    tokens = prompt_tokens(cfg["vocab_size"])
    w = canonical(cfg)
    logits = forward(cfg, w, tokens)
    exact = forward(cfg, w, tokens, dtype=torch.float64)
    f64_diff = (logits.double() - exact).abs().max().item()
    assert f64_diff < 1e-5, f64_diff
    extra = {"max_abs_diff_vs_float64": fmt(f64_diff)}
    if variants:
        hf_diff = check_formats(cfg, w, tokens, logits)
        extra["max_abs_diff_hf_layout"] = {k: fmt(v) for k, v in hf_diff.items()}
    n_keep = min(cfg["vocab_size"], 512)
    write_json(os.path.join(GOLDEN, "%s_logits.json" % name), logits_golden(name, cfg, logits, tokens, n_keep, extra))
    if variants:
        for dtype in ["float16", "bfloat16"]:
            lg = forward(cfg, canonical(cfg, dtype), tokens)
            g = logits_golden(name, cfg, lg, tokens, n_keep, {"weights_rounded_to": dtype})
            write_json(os.path.join(GOLDEN, "%s_%s_logits.json" % (name, dtype)), g)
    return logits


def main():
    torch.set_num_threads(1)
    what = sys.argv[1] if len(sys.argv) > 1 else "logits"
    os.makedirs(GOLDEN, exist_ok=True)
    if what == "logits":
        make_logits("tiny")
        make_logits("tiny_gqa")
    elif what == "stories15M":
        make_logits("stories15M", variants=False)
    elif what == "sampling":
        import lm_sampling
        lm_sampling.main()
    elif what == "int8":
        import lm_int8
        lm_int8.main()
    elif what == "runq" and len(sys.argv) > 2:
        import lm_int8
        lm_int8.greedy_check(sys.argv[2])
    elif what == "runc" and len(sys.argv) > 2:
        import lm_sampling
        lm_sampling.crosscheck(*sys.argv[2:4])
    else:
        sys.exit("usage: lm_reference.py [logits|stories15M|sampling|int8|runc HARNESS [TOKENIZER_32K]|"
                 "runq RUNQ_HARNESS]")


if __name__ == "__main__":
    main()
