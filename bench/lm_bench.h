// bench/lm_bench.h: strata-bench's `lm` group (bench/lm_bench.cpp): strata-lm's model at stories15M
// dimensions beside the run.c-style baseline (bench/lm_baseline.h) in the same run.
#pragma once

#include <nlohmann/json.hpp>

namespace strata::bench {

// Decode and prefill tokens/s at 1 and 2 threads, the share of the copy bandwidth the decode reaches,
// start-up to the first token, and strata-lm's peak RSS (a child process). Throws when the two models'
// greedy tokens differ.
void lm_benchmarks(nlohmann::ordered_json& out);

// `strata-bench --peak-rss EXE ARGS...`: runs EXE (its stdout to /dev/null) and prints its
// peak RSS in KiB; returns EXE's exit status (Note [Peak RSS from a small parent]).
int peak_rss_main(int argc, char** argv);

}  // namespace strata::bench
