// core/parallel.h: the one owner of strata's thread count (OpenMP for elementwise loops and Eigen's
// GEMM) and a parallel_for that stays serial for small ranges, where threads cost more than they save.
#pragma once

#include <cstdint>
#include <functional>

namespace strata {

// Sets the threads used by kernels (OpenMP and Eigen together). n >= 1.
void set_num_threads(int n);
int get_num_threads();

// Calls fn(begin, end) over [begin, end) in chunks; in parallel only when the range exceeds `grain`.
template <typename Fn>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, const Fn& fn);

namespace detail {
bool in_parallel_region();
void parallel_for_impl(std::int64_t begin, std::int64_t end, const std::function<void(std::int64_t, std::int64_t)>& fn);

// Out of line, so that wrapping fn in a std::function does not weigh on the serial path of every
// small loop that inlines parallel_for.
template <typename Fn>
[[gnu::noinline]] void parallel_for_maybe_threaded(std::int64_t begin, std::int64_t end, const Fn& fn) {
  if (get_num_threads() == 1 || in_parallel_region()) return fn(begin, end);
  parallel_for_impl(begin, end, fn);
}
}  // namespace detail

template <typename Fn>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, const Fn& fn) {
  if (end - begin > grain) return detail::parallel_for_maybe_threaded(begin, end, fn);
  if (begin < end) fn(begin, end);
}

}  // namespace strata
