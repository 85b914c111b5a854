#!/usr/bin/env python3
"""Sampling goldens (tests/golden/lm/sampling.json): docs/lm.md's generation loop on the reference
model with torch.multinomial drawing from one torch.Generator seeded per run.

Loop (run.c's generate): feed BOS at position 0; while pos < steps: logits of the last fed token;
if pos + 1 < len(prompt) the next token is the prompt's, else sample (t == 0: first argmax; else
probs = softmax(logits / t), with top-p when 0 < topp < 1: sort descending, cum = cumsum, zero the
entries whose preceding mass (cum - p) exceeds topp, multinomial over what is left); stop when the
next token is BOS (1), as run.c does. "tokens" is the fed sequence: prompt then sampled tokens,
without the stopping BOS ("stopped_on_bos" says whether it came).

Run:  python3 scripts/reference/lm_reference.py sampling
"""
import os
import subprocess
import tempfile

import sentencepiece as spm
import torch

import lm_reference
import lm_weights

PROMPT = [1, 37, 101, 5]
RUNS = [  # (temperature, topp, seed, steps)
    (0.0, 0.9, 0, 20),
    (1.0, 1.0, 42, 20),
    (1.0, 1.0, 1234, 20),
    (0.8, 0.9, 42, 20),
    (0.8, 0.9, 1234, 20),
    (1.0, 0.5, 7, 20),
    (1.0, 1.0, 18, 20),  # seed 18 samples BOS (the run stops early) on both configs
    (0.0, 0.9, 0, 64),   # greedy over the whole context (seq_len 64)
]


def sample(logits, temperature, topp, g):
    if temperature == 0.0:
        return int(torch.argmax(logits).item())
    probs = torch.softmax(logits / temperature, dim=-1)
    if 0.0 < topp < 1.0:
        ordered, idx = torch.sort(probs, descending=True)
        cum = torch.cumsum(ordered, dim=0)
        ordered[(cum - ordered) > topp] = 0.0
        return int(idx[torch.multinomial(ordered, 1, generator=g)].item())
    return int(torch.multinomial(probs, 1, generator=g).item())


def generate(cfg, w, prompt, steps, temperature, topp, seed):
    g = torch.Generator().manual_seed(seed)
    tokens = [prompt[0]]
    pos = 0
    stopped = False
    while pos < steps:
        logits = lm_reference.forward(cfg, w, tokens)[-1]
        nxt = prompt[pos + 1] if pos + 1 < len(prompt) else sample(logits, temperature, topp, g)
        pos += 1
        if nxt == 1:
            stopped = True
            break
        tokens.append(nxt)
    return tokens, stopped


def crosscheck(harness, tok32k=None):
    """run.c (through the harness of lm_tokenizer.py) on the generated .bin: its logits equal the
    goldens to 1e-5 with the same argmax everywhere, and its greedy ids equal this reference's: 64
    steps on tiny and tiny_gqa, 30 on stories15M when llama2.c's own tokenizer.bin (vocab 32000) is
    given."""
    tok = os.path.join(lm_reference.GOLDEN, "..", "..", "lm", "data", "tok512")
    sp = spm.SentencePieceProcessor(model_file=tok + ".model")
    cases = [(c, p, 64, tok + ".bin") for c in ["tiny", "tiny_gqa"] for p in ["", "Tom saw the cat"]]
    if tok32k:
        cases.append(("stories15M", "", 30, tok32k))
    with tempfile.TemporaryDirectory() as tmp:
        for name in ["tiny", "tiny_gqa"] + (["stories15M"] if tok32k else []):
            cfg = lm_weights.CONFIGS[name]
            path = os.path.join(tmp, name + ".bin")
            lm_weights.write_bin_v0(path, cfg, lm_weights.make_weights(cfg))
            lm_reference.check_against_c(harness, path, name + "_logits.json")
        for name, prompt, steps, tok_bin in cases:
            cfg = lm_weights.CONFIGS[name]
            w = lm_weights.make_weights(cfg)
            path = os.path.join(tmp, name + ".bin")
            lm_weights.write_bin_v0(path, cfg, w)
            out = subprocess.run([harness, "greedy", path, tok_bin, prompt, str(steps)], check=True,
                                 capture_output=True, text=True).stdout
            runc = [int(t) for t in out.split()]
            ids = [1] + (sp.encode(prompt) if prompt else [])
            ref, _ = generate(cfg, {k: torch.from_numpy(v) for k, v in w.items()}, ids, steps, 0.0, 0.9, 0)
            assert runc == ref, (name, prompt, runc, ref)
            print("run.c greedy == reference:", name, repr(prompt), steps, "steps")


def main():
    torch.set_num_threads(1)
    out = []
    for name in ["tiny", "tiny_gqa"]:
        cfg = lm_weights.CONFIGS[name]
        w = lm_reference.canonical(cfg)
        for temperature, topp, seed, steps in RUNS:
            tokens, stopped = generate(cfg, w, PROMPT, steps, temperature, topp, seed)
            out.append({"config": name, "seed": seed, "temperature": temperature, "topp": topp,
                        "prompt_tokens": PROMPT, "steps": steps, "tokens": tokens,
                        "stopped_on_bos": stopped, "torch_version": torch.__version__})
    lm_reference.write_json(os.path.join(lm_reference.GOLDEN, "sampling.json"), out)


if __name__ == "__main__":
    main()
