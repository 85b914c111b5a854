#!/usr/bin/env python3
"""The test tokenizer of issue 30: a SentencePiece BPE model trained here, its llama2.c tokenizer.bin
export, and the tokenizer goldens.

- Training text: made by `training_text()` (deterministic: fixed word lists, a splitmix64 stream),
  English-like sentences with some Latin-1/Greek letters; characters outside it (CJK, emoji, ...)
  exercise byte fallback.
- Model: BPE, vocab 512, byte_fallback, add_dummy_prefix, unk 0, bos 1, eos 2, no pad, and Llama 2's
  other normalizer settings (identity normalization, extra whitespace kept, digits split, whitespace-only
  pieces allowed) so that run.c's encoder sees the same text SentencePiece does.
- tokenizer.bin (llama2.c's tokenizer.py export layout, written by our own code): uint32
  max_token_length, then per id: float32 score, uint32 byte length, UTF-8 bytes of the piece with
  '\u2581' written as ' '; BOS is written as "\\n<s>\\n" and EOS as "\\n</s>\\n" as tokenizer.py does.
- tests/golden/lm/tokenizer.json: per string, SentencePiece's ids and decode, and run.c's
  encode(t, text, 1, 0) ids and decoded stdout bytes (from a harness around llama2.c's run.c built in
  /tmp with -DTESTING; see tests/golden/lm/README.md).

Run (needs python3-sentencepiece):
  python3 scripts/reference/lm_tokenizer.py train          # tests/lm/data/tok512.model + tok512.bin
  python3 scripts/reference/lm_tokenizer.py export M.model # M.bin beside it
  python3 scripts/reference/lm_tokenizer.py harness /tmp/llama2.c/run.c  # -> /tmp/lm_run_harness
  python3 scripts/reference/lm_tokenizer.py golden /tmp/lm_run_harness    # tokenizer.json
"""
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

import sentencepiece as spm

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "tests", "lm", "data")
GOLDEN = os.path.join(ROOT, "tests", "golden", "lm")
MASK64 = (1 << 64) - 1

SUBJECTS = ["the cat", "a little dog", "Tom", "Lily", "the old man", "a bird", "the girl", "Max",
            "her mother", "the small boy", "Zoë", "the café owner", "a big fish", "the robot"]
VERBS = ["saw", "liked", "found", "wanted", "played with", "looked at", "ran to", "jumped over",
         "helped", "said hello to", "was happy with", "gave a hug to", "smiled at"]
OBJECTS = ["the ball", "a red apple", "the tree", "a shiny stone", "the park", "his friend",
           "the big box", "a blue kite", "the river", "some cake", "the crème brûlée", "a naïve fox",
           "the über-fast car", "the Straße", "an ἄλφα sign", "3 cookies", "42 stars", "the moon"]
ENDINGS = [".", "!", ".", "?", ". It was fun.", ". They were friends.", ", and then went home.",
           " — the end.", " and said \"wow\".", ", (yes) really."]


def _stream(seed):
    x = seed
    while True:
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def training_text(lines=4000):
    """Deterministic sentences, one per line."""
    r = _stream(20261207)
    pick = lambda xs: xs[next(r) % len(xs)]  # noqa: E731
    out = []
    for _ in range(lines):
        s = "%s %s %s%s" % (pick(SUBJECTS), pick(VERBS), pick(OBJECTS), pick(ENDINGS))
        if next(r) % 4 == 0:
            s += " %s %s %s." % (pick(SUBJECTS).capitalize(), pick(VERBS), pick(OBJECTS))
        out.append(s[0].upper() + s[1:])
    return "\n".join(out) + "\n"


def train(model_path):
    """Trains from an in-memory iterator so that the model (whose trainer_spec records its input and
    prefix) does not depend on temporary paths: the same bytes every run."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_text().splitlines()), model_writer=out,
        model_type="bpe", vocab_size=512, byte_fallback=True, add_dummy_prefix=True, unk_id=0, bos_id=1,
        eos_id=2, pad_id=-1, character_coverage=1.0, normalization_rule_name="identity",
        remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True,
        num_threads=1, input_sentence_size=0, shuffle_input_sentence=False, minloglevel=2)
    with open(model_path, "wb") as f:
        f.write(out.getvalue())


def export_bin(model_path, bin_path):
    sp = spm.SentencePieceProcessor(model_file=model_path)
    pieces = []
    for i in range(sp.get_piece_size()):
        p = sp.id_to_piece(i)
        if i == sp.bos_id():
            p = "\n<s>\n"
        elif i == sp.eos_id():
            p = "\n</s>\n"
        pieces.append((sp.get_score(i), p.replace("\u2581", " ").encode("utf-8")))
    with open(bin_path, "wb") as f:
        f.write(struct.pack("<I", max(len(b) for _, b in pieces)))
        for score, b in pieces:
            f.write(struct.pack("<fI", score, len(b)))
            f.write(b)


# Strings for the goldens: ASCII, UTF-8 in and out of the vocabulary, byte fallback (CJK, emoji,
# a 4-byte character), spaces leading/trailing/repeated, digits, punctuation, newline, empty.
STRINGS = [
    "", "a", " ", "  ", "Tom saw the cat.", "Lily liked a red apple!", "the café owner", "Zoë",
    "crème brûlée", "ἄλφα", "漢字", "🙂", "naïve 🙂 fox", "𝄞 clef", " leading space",
    "trailing space ", "multiple   spaces  here", "\ttab", "line one\nline two", "1234567890",
    "3 cookies and 42 stars", "The über-fast car — wow!", "Ωmega", "¿qué?", "x\u0301",
    "unknownword zyxwvq", "\"quoted\" (paren) [bracket]",
]


# A test harness around llama2.c's run.c, written here; `harness RUN_C` compiles it beside a fetched
# run.c in /tmp (run.c is never committed). Modes: `encode TOK.bin VOCAB FILE` (hex lines in; ids and
# the hex of what generate would print out), `greedy MODEL.bin TOK.bin PROMPT STEPS` (fed ids) and
# `logits MODEL.bin TOKEN...` (every logit at every position, token by token).
HARNESS_C = r'''// Test harness around llama2.c's run.c (built with -DTESTING as test.c does). Never committed.
// harness encode TOK.bin VOCAB FILE   : FILE has one hex-encoded string per line; prints
//                                       "ids|decoded-hex" per line (encode(t, s, 1, 0), then run.c's
//                                       decode + safe_printf of the ids after BOS into a buffer)
// harness greedy MODEL.bin TOK.bin PROMPT STEPS : prints the token ids generate() feeds, -t 0
#define TESTING
#include "run.c"

static char outbuf[1 << 16];
static size_t outlen;
static void capture(char *piece) {
    if (piece == NULL || piece[0] == '\0') return;
    if (piece[1] == '\0') {
        unsigned char b = piece[0];
        if (!(isprint(b) || isspace(b))) return;
    }
    size_t n = strlen(piece);
    memcpy(outbuf + outlen, piece, n);
    outlen += n;
}

static int unhex(const char *h, char *out) {
    int n = 0;
    while (h[0] && h[1] && h[0] != '\n') { unsigned v; sscanf(h, "%2x", &v); out[n++] = (char)v; h += 2; }
    out[n] = 0;
    return n;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "encode") == 0) {
        Tokenizer t;
        build_tokenizer(&t, argv[2], atoi(argv[3]));
        FILE *f = fopen(argv[4], "r");
        char line[8192], text[4096];
        int tokens[8192];
        while (fgets(line, sizeof line, f)) {
            unhex(line, text);
            int n = 0;
            encode(&t, text, 1, 0, tokens, &n);
            for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", tokens[i]);
            outlen = 0;
            for (int i = 1; i < n; i++) capture(decode(&t, tokens[i - 1], tokens[i]));
            printf("|");
            for (size_t i = 0; i < outlen; i++) printf("%02x", (unsigned char)outbuf[i]);
            printf("\n");
        }
        fclose(f);
        free_tokenizer(&t);
        return 0;
    }
    if (argc >= 6 && strcmp(argv[1], "greedy") == 0) {
        Transformer tr;
        build_transformer(&tr, argv[2]);
        Tokenizer t;
        build_tokenizer(&t, argv[3], tr.config.vocab_size);
        int steps = atoi(argv[5]);
        int prompt[4096], np = 0;
        encode(&t, argv[4], 1, 0, prompt, &np);
        int token = prompt[0], pos = 0, next;
        printf("%d", token);
        while (pos < steps) {
            float *logits = forward(&tr, token, pos);
            next = pos < np - 1 ? prompt[pos + 1] : sample_argmax(logits, tr.config.vocab_size);
            pos++;
            if (next == 1) break;
            printf(" %d", next);
            token = next;
        }
        printf("\n");
        free_tokenizer(&t);
        free_transformer(&tr);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "logits") == 0) {
        // logits MODEL.bin TOKEN...: all vocab logits at every position, one line per position
        Transformer tr;
        build_transformer(&tr, argv[2]);
        for (int pos = 0; pos < argc - 3; pos++) {
            float *logits = forward(&tr, atoi(argv[3 + pos]), pos);
            for (int i = 0; i < tr.config.vocab_size; i++) printf(i ? " %.9g" : "%.9g", logits[i]);
            printf("\n");
        }
        free_transformer(&tr);
        return 0;
    }
    fprintf(stderr, "usage\n");
    return 2;
}
'''


def build_harness(run_c):
    """Compiles HARNESS_C around RUN_C (llama2.c's run.c, or runq.c for the int8 checks) into
    /tmp/lm_<stem>_harness."""
    stem = os.path.basename(run_c).rsplit(".", 1)[0]
    src = os.path.join(os.path.dirname(os.path.abspath(run_c)), "lm_%s_harness.c" % stem)
    out = "/tmp/lm_%s_harness" % stem
    with open(src, "w") as f:
        f.write(HARNESS_C.replace('#include "run.c"', '#include "%s"' % os.path.basename(run_c)))
    subprocess.run(["gcc", "-O2", "-o", out, src, "-lm"], check=True)
    print(out)


def golden(harness, model_path, bin_path):
    sp = spm.SentencePieceProcessor(model_file=model_path)
    with tempfile.NamedTemporaryFile("w", suffix=".hex", delete=False) as f:
        for s in STRINGS:
            f.write(s.encode("utf-8").hex() + "\n")
        hexfile = f.name
    out = subprocess.run([harness, "encode", bin_path, str(sp.get_piece_size()), hexfile],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    os.remove(hexfile)
    assert len(out) == len(STRINGS)
    cases = []
    for s, line in zip(STRINGS, out):
        ids_text, decoded_hex = line.split("|")
        runc = [int(t) for t in ids_text.split()]
        ids = sp.encode(s)
        cases.append({
            "text": s,
            "sentencepiece_ids": ids,
            "sentencepiece_pieces": [sp.id_to_piece(i) for i in ids],
            "sentencepiece_decoded": sp.decode(ids),
            "runc_ids": runc,
            "runc_decoded": bytes.fromhex(decoded_hex).decode("utf-8"),
            "runc_equals_sentencepiece": runc == [1] + ids,
        })
    return {
        "model": "tests/lm/data/tok512.model",
        "bin": "tests/lm/data/tok512.bin",
        "vocab_size": sp.get_piece_size(),
        "notes": "sentencepiece_ids: SentencePieceProcessor.encode(text) (no BOS); runc_ids: run.c's "
                 "encode(t, text, 1, 0) on tok512.bin (BOS first); runc_decoded: what run.c's generate "
                 "prints for runc_ids[1:] (decode(prev, tok) through safe_printf).",
        "sentencepiece_version": spm.__version__,
        "cases": cases,
    }


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    model = os.path.join(DATA, "tok512.model")
    if what == "train":
        os.makedirs(DATA, exist_ok=True)
        train(model)
        export_bin(model, os.path.join(DATA, "tok512.bin"))
    elif what == "export" and len(sys.argv) > 2:
        export_bin(sys.argv[2], sys.argv[2].rsplit(".", 1)[0] + ".bin")
    elif what == "harness" and len(sys.argv) > 2:
        build_harness(sys.argv[2])
    elif what == "golden" and len(sys.argv) > 2:
        g = golden(sys.argv[2], model, os.path.join(DATA, "tok512.bin"))
        os.makedirs(GOLDEN, exist_ok=True)
        with open(os.path.join(GOLDEN, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(g, f, indent=1, ensure_ascii=False)
            f.write("\n")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
