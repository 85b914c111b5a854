// bench/stream_copy.cpp: STREAM's Copy (bench/stream_copy.h). As STREAM does it: each thread copies
// its static share of the arrays, the arrays are first touched by the same split (pages land where
// they are used), the best repeat is reported, and a copy of N bytes counts 2N (read and written).
#include "bench/stream_copy.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>

namespace strata::bench {

double stream_copy_bytes_per_second(int threads, int megabytes, int repeats) {
  const std::size_t n = static_cast<std::size_t>(megabytes) << 18;  // floats in `megabytes` MiB
  const std::unique_ptr<float[]> a(new float[n]), c(new float[n]);
  const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < count; ++i) {
    a[i] = 1.0f;
    c[i] = 0.0f;
  }
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long i = 0; i < count; ++i) c[i] = a[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * static_cast<double>(n * sizeof(float)) / s);
    a[static_cast<std::size_t>(r) % n] = c[(static_cast<std::size_t>(r) * 7919) % n];  // keep both alive
  }
  return best;
}

}  // namespace strata::bench
