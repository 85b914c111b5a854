#!/usr/bin/env python3
"""Int8 (Q8_0, groups of 64) references for strata-lm's --int8 path: tests/golden/lm/<config>_q80_logits.json.

Weights are quantized as llama2.c's export.py version2_export does (lm_weights.quantize_q80: per group
of 64 consecutive elements s = max|w| / 127, q = round-half-even(w / s)); the embedding table used for
the input lookup is the dequantized one, as runq.c does. Two forwards:
- "runq": runq.c's arithmetic. Before every projection the activation row is quantized too, per group
  of 64 (s = max|x| / 127, q = round-half-away(x / s), C's round()); each output is
  sum over groups g of (float(int32 dot of the group) * w_s[g]) * x_s[g], summed in float32 in group
  order. Everything else (norms, rotary, attention, SwiGLU) in float32.
- "weights_only": the dequantized weights q * s with float32 activations (an int8 path that keeps
  activations in float computes this).
Both are reported against the float model (max_abs_diff_vs_float), which is what a tolerance for the
int8 path against the float goldens has to cover.

Run:  python3 scripts/reference/lm_reference.py int8
      python3 scripts/reference/lm_reference.py runq /tmp/lm_runq_harness   # runq.c greedy == "runq"
"""
import os
import subprocess
import tempfile

import numpy as np
import torch

import lm_reference
import lm_weights

GROUP = 64
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def quantized_weights(cfg):
    """HF name -> (int8 values [out, in], float32 scales [out, in / 64]) for every matrix runq.c
    quantizes, and the float weights with the embedding dequantized."""
    w = lm_weights.make_weights(cfg)
    q = {}
    for name, t in w.items():
        if t.ndim == 2:
            vals, scales = lm_weights.quantize_q80(t, GROUP)
            q[name] = (torch.from_numpy(vals.reshape(t.shape).astype(np.int64)),
                       torch.from_numpy(scales.reshape(t.shape[0], t.shape[1] // GROUP)))
    fw = {k: torch.from_numpy(v) for k, v in w.items()}
    fw["model.embed_tokens.weight"] = torch.from_numpy(lm_weights.dequantize_q80(w["model.embed_tokens.weight"]))
    return q, fw


def quantize_rows(x):
    """runq.c's quantize() on each row of x [T, n]: int values [T, n / 64, 64], scales [T, n / 64]."""
    g = x.reshape(x.shape[0], -1, GROUP)
    scale = g.abs().max(dim=-1).values / torch.tensor(127.0, dtype=torch.float32)
    v = (g / scale[..., None]).double()  # the float32 quotient, rounded as C's round(): half away
    ints = torch.sign(v) * torch.floor(v.abs() + 0.5)
    return ints.to(torch.int64), scale


def runq_linear(q):
    def linear(x, name):
        wq, ws = q[name]
        xq, xs = quantize_rows(x)
        d = wq.shape[0]
        ival = torch.einsum("tgk,dgk->tdg", xq, wq.reshape(d, -1, GROUP))  # exact int64 dots
        terms = (ival.to(torch.float32) * ws[None, :, :]) * xs[:, None, :]
        val = torch.zeros(terms.shape[:2], dtype=torch.float32)
        for g in range(terms.shape[2]):  # float32, in group order, as runq.c's loop
            val = val + terms[:, :, g]
        return val
    return linear


def dequantized(q, fw):
    out = dict(fw)
    for name, (wq, ws) in q.items():
        out[name] = (wq.to(torch.float32).reshape(ws.shape[0], -1, GROUP) * ws[..., None]).reshape(wq.shape)
    return out


def make_golden(name):
    cfg = lm_weights.CONFIGS[name]
    tokens = lm_reference.prompt_tokens(cfg["vocab_size"])
    q, fw = quantized_weights(cfg)
    ref = lm_reference.forward(cfg, lm_reference.canonical(cfg), tokens)
    runq = lm_reference.forward(cfg, fw, tokens, linear=runq_linear(q))
    wonly = lm_reference.forward(cfg, dequantized(q, fw), tokens)
    n_keep = min(cfg["vocab_size"], 512)
    f = lm_reference.fmt
    g = lm_reference.logits_golden(name, cfg, runq, tokens, n_keep, {
        "quantization": "Q8_0, groups of 64 (export.py version2_export); activations quantized as runq.c",
        "logits_weights_only": [[f(v) for v in wonly[p, :n_keep].tolist()] for p in lm_reference.POSITIONS],
        "argmax_weights_only": torch.argmax(wonly, dim=-1).tolist(),
        "max_abs_diff_vs_float": {"runq": f((runq - ref).abs().max().item()),
                                  "weights_only": f((wonly - ref).abs().max().item())},
        "max_abs_float_logit": f(ref.abs().max().item()),
        "argmax_agreement_with_float": {
            "runq": int((runq.argmax(-1) == ref.argmax(-1)).sum().item()),
            "weights_only": int((wonly.argmax(-1) == ref.argmax(-1)).sum().item())},
    })
    lm_reference.write_json(os.path.join(lm_reference.GOLDEN, "%s_q80_logits.json" % name), g)


def greedy_check(harness):
    """runq.c on the version-2 file: its logits equal the q80 goldens to 1e-5 (same argmax at every
    position) and its greedy ids equal the "runq" emulation's for 64 steps."""
    tok = os.path.join(lm_reference.GOLDEN, "..", "..", "lm", "data", "tok512.bin")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ["tiny", "tiny_gqa"]:
            cfg = lm_weights.CONFIGS[name]
            path = os.path.join(tmp, name + "_q80.bin")
            lm_weights.write_bin_q80(path, cfg, lm_weights.make_weights(cfg))
            lm_reference.check_against_c(harness, path, name + "_q80_logits.json")
            out = subprocess.run([harness, "greedy", path, tok, "", "64"], check=True, capture_output=True,
                                 text=True).stdout
            runc = [int(t) for t in out.split()]
            q, fw = quantized_weights(cfg)
            lin = runq_linear(q)
            ids = [1]
            while len(ids) < 65:
                nxt = int(torch.argmax(lm_reference.forward(cfg, fw, ids, linear=lin)[-1]).item())
                if nxt == 1:
                    break
                ids.append(nxt)
            assert runc == ids, (name, runc, ids)
            print("runq.c greedy == runq emulation:", name, "64 steps")


def main():
    torch.set_num_threads(1)
    make_golden("tiny")
    make_golden("tiny_gqa")


if __name__ == "__main__":
    main()
