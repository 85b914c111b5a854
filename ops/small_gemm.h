// ops/small_gemm.h: the kernel for small float and double products whose right operand has
// unit-stride rows (linalg_ops.cpp's gemm; Note [Small products skip Eigen's GEMM] there). It reads
// both operands in place through their strides: no packing, no blocking, no threads.
#pragma once

#include <cstdint>

namespace strata::ops {

// Columns of the result per strip: two AVX2 registers.
template <typename T>
inline constexpr std::int64_t kSmallGemmStrip = 64 / sizeof(T);
// Products of at most this many multiply-adds (n * k * p) run small_gemm, when it applies.
inline constexpr std::int64_t kSmallGemmMaxMacs = 8192;

// A matrix operand: element (r, c) is data[r * s0 + c * s1].
template <typename T>
struct StridedMatrix {
  const T* data;
  std::int64_t s0, s1;
};

namespace small_gemm_detail {

// Rows 0 .. R of o (row stride os), columns 0 .. kStrip, (+)= alpha * x @ v, where x is R x k (strides
// xs0, xs1) and row l of v is v[l * vs .. + kStrip]. The R x kStrip sums stay in registers: the
// innermost loop has a fixed width and vectorises, and the R rows share each row of v.
template <std::int64_t R, typename T>
inline void rows_times_strip(T* o, std::int64_t os, const T* x, std::int64_t xs0, std::int64_t xs1, const T* v,
                             std::int64_t vs, std::int64_t k, T alpha, bool accumulate) {
  constexpr std::int64_t kStrip = kSmallGemmStrip<T>;
  T acc[R][kStrip] = {};
  for (std::int64_t l = 0; l < k; ++l) {
    const T* row = v + l * vs;
    for (std::int64_t r = 0; r < R; ++r) {
      const T s = x[r * xs0 + l * xs1];
#pragma omp simd
      for (std::int64_t q = 0; q < kStrip; ++q) acc[r][q] += s * row[q];
    }
  }
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t q = 0; q < kStrip; ++q)
      o[r * os + q] = accumulate ? o[r * os + q] + alpha * acc[r][q] : alpha * acc[r][q];
}

}  // namespace small_gemm_detail

// out (contiguous, n x p) = alpha * a @ b, or += when `accumulate`, for b with unit-stride rows
// (b.s1 == 1) and p a multiple of kSmallGemmStrip<T>: strips of kSmallGemmStrip columns, four rows
// at a time, each row a sum of k rows of b weighted by a's elements.
template <typename T>
void small_gemm(T* out, StridedMatrix<T> a, StridedMatrix<T> b, std::int64_t n, std::int64_t k, std::int64_t p,
                T alpha, bool accumulate) {
  using small_gemm_detail::rows_times_strip;
  for (std::int64_t j = 0; j < p; j += kSmallGemmStrip<T>) {
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      rows_times_strip<4>(out + i * p + j, p, a.data + i * a.s0, a.s0, a.s1, b.data + j, b.s0, k, alpha, accumulate);
    for (; i < n; ++i)
      rows_times_strip<1>(out + i * p + j, p, a.data + i * a.s0, a.s0, a.s1, b.data + j, b.s0, k, alpha, accumulate);
  }
}

}  // namespace strata::ops
