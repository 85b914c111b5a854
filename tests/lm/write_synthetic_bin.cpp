// tests/lm/write_synthetic_bin.cpp: `lm-write-synthetic-bin CONFIG OUT.bin` writes docs/lm.md's
// deterministic weights for CONFIG (tiny, tiny_gqa, stories15M) as a llama2.c float32 checkpoint:
// the file benchmarks and run.c comparisons read (no checkpoint is committed).
#include <cstdio>
#include <exception>

#include "synthetic_weights.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: lm-write-synthetic-bin tiny|tiny_gqa|stories15M OUT.bin\n");
    return 2;
  }
  try {
    lm_synthetic::write_llama2c_bin(argv[2], lm_synthetic::config_named(argv[1]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lm-write-synthetic-bin: %s\n", e.what());
    return 2;
  }
  return 0;
}
