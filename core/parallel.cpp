// core/parallel.cpp: thread count and the OpenMP-backed parallel_for.
#include "core/parallel.h"

#include <omp.h>

#include <Eigen/Core>
#include <atomic>

#include "core/util/error.h"

namespace strata {

namespace {
std::atomic<int> num_threads{0};  // 0: not set yet, use OpenMP's default
}

void set_num_threads(int n) {
  STRATA_CHECK(n >= 1, "set_num_threads expects a positive number of threads, but got ", n);
  num_threads.store(n);
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
}

int get_num_threads() {
  const int n = num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

namespace detail {

bool in_parallel_region() { return omp_in_parallel() != 0; }

void parallel_for_impl(std::int64_t begin, std::int64_t end,
                       const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const int threads = get_num_threads();
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num();
    const std::int64_t n = omp_get_num_threads();
    const std::int64_t chunk = (end - begin + n - 1) / n;
    const std::int64_t lo = begin + t * chunk;
    const std::int64_t hi = std::min(end, lo + chunk);
    if (lo < hi) fn(lo, hi);
  }
}

}  // namespace detail
}  // namespace strata
