# run.c's exact stdout in runc_tiny_gqa_greedy.txt (stderr, "achieved tok/s: ...", not kept).
# llama2.c: https://github.com/karpathy/llama2.c commit 350e04fe35433e6d2941dce5a1f53308f87058eb
# run.c built in /tmp (never committed) with gcc 12.2.0: gcc -O3 -o /tmp/run run.c -lm
python3 scripts/reference/lm_weights.py tiny_gqa --bin /tmp/tiny_gqa.bin
/tmp/run /tmp/tiny_gqa.bin -z tests/lm/data/tok512.bin -i "Once upon a time" -n 40 -t 0 > tests/golden/lm/runc_tiny_gqa_greedy.txt
