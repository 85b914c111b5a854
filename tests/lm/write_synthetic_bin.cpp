// tests/lm/write_synthetic_bin.cpp: `lm-write-synthetic-bin CONFIG OUT.bin [--q80]` writes docs/lm.md's
// deterministic weights for CONFIG (tiny, tiny_gqa, stories15M) as a llama2.c float32 checkpoint, or
// with --q80 as the int8 version-2 checkpoint export.py --version 2 writes (runq.c's): the files
// benchmarks and run.c/runq.c comparisons read (no checkpoint is committed).
#include <cstdio>
#include <cstring>
#include <exception>

#include "q80_writer.h"
#include "synthetic_weights.h"

int main(int argc, char** argv) {
  const bool q80 = argc == 4 && std::strcmp(argv[3], "--q80") == 0;
  if (argc != 3 && !q80) {
    std::fprintf(stderr, "usage: lm-write-synthetic-bin tiny|tiny_gqa|stories15M OUT.bin [--q80]\n");
    return 2;
  }
  try {
    const lm::Config config = lm_synthetic::config_named(argv[1]);
    if (q80) lm_synthetic::write_llama2c_q80_bin(argv[2], config);
    else lm_synthetic::write_llama2c_bin(argv[2], config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lm-write-synthetic-bin: %s\n", e.what());
    return 2;
  }
  return 0;
}
