// bench/stream_copy.h: the machine's memory bandwidth as STREAM's Copy kernel measures it (c = a over
// arrays far larger than the caches, bytes counted as read + written), in the same run as the
// benchmarks it anchors. Compiled beside bench/lm_baseline.cpp with its flags.
#pragma once

namespace strata::bench {

// Bytes per second of the best of `repeats` copies of 2 x `megabytes` MiB, on `threads` OpenMP threads.
double stream_copy_bytes_per_second(int threads, int megabytes = 128, int repeats = 10);

}  // namespace strata::bench
