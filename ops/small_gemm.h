// ops/small_gemm.h: the kernel for small float and double products whose right operand has
// unit-stride rows (linalg_ops.cpp's gemm; Note [Small products skip Eigen's GEMM] there). It reads
// both operands in place through their strides: no packing, no blocking, no threads.
#pragma once

#include <cstdint>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace strata::ops {

// Columns of the result per strip: two AVX2 registers.
template <typename T>
inline constexpr std::int64_t kSmallGemmStrip = 64 / sizeof(T);
// Products of at most this many multiply-adds (n * k * p) run small_gemm or small_gemm_dots, when
// their layout suits one of them.
inline constexpr std::int64_t kSmallGemmMaxMacs = 8192;

// Whether an (n x k) @ (k x p) product is small enough for this file's kernels: k > 0 and at most
// kSmallGemmMaxMacs multiply-adds, with n * k * p compared without forming it.
inline bool is_small_product(std::int64_t n, std::int64_t k, std::int64_t p) {
  return k > 0 && k <= kSmallGemmMaxMacs && n * p <= kSmallGemmMaxMacs / k;
}

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
  // One branch for the block, then whole-width rows: with the choice inside the loop GCC split each
  // row's store into pieces of 8, 4, 2, 1 and 1 lanes and spilled the sums to the stack first.
  if (accumulate) {
    for (std::int64_t r = 0; r < R; ++r)
#pragma omp simd
      for (std::int64_t q = 0; q < kStrip; ++q) o[r * os + q] += alpha * acc[r][q];
  } else {
    for (std::int64_t r = 0; r < R; ++r)
#pragma omp simd
      for (std::int64_t q = 0; q < kStrip; ++q) o[r * os + q] = alpha * acc[r][q];
  }
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

// ---- column-major b: dot products (the forward's x @ w.t()) ----------------------------------------

#if defined(__AVX2__) && defined(__FMA__)
inline constexpr bool kSmallDotGemm = true;

namespace small_gemm_detail {

// The eight lane sums of v[0..8), as one vector: two rounds of pairwise adds, then the two 128-bit
// halves added.
inline __m256 sum_lanes8(const __m256 (&v)[8]) {
  const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

inline float sum_lanes(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

}  // namespace small_gemm_detail

// out (contiguous, n x p) = alpha * a @ b, or += when `accumulate`, for float a with unit-stride rows
// and b with unit-stride columns (b = w.t() for a row-major w), k a multiple of 8: out[i][j] is the
// dot product of row i of a and column j of b, both contiguous. Eight columns at a time share each
// load of a's row and are summed across lanes together (sum_lanes8); leftover columns one by one.
inline void small_gemm_dots(float* out, const float* a, std::int64_t as0, const float* b, std::int64_t bs1,
                            std::int64_t n, std::int64_t k, std::int64_t p, float alpha, bool accumulate) {
  using small_gemm_detail::sum_lanes;
  using small_gemm_detail::sum_lanes8;
  const __m256 va = _mm256_set1_ps(alpha);
  for (std::int64_t i = 0; i < n; ++i) {
    const float* x = a + i * as0;
    float* o = out + i * p;
    std::int64_t j = 0;
    for (; j + 8 <= p; j += 8) {
      __m256 acc[8];
      for (__m256& v : acc) v = _mm256_setzero_ps();
      for (std::int64_t l = 0; l < k; l += 8) {
        const __m256 xv = _mm256_loadu_ps(x + l);
        for (int c = 0; c < 8; ++c) acc[c] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(b + (j + c) * bs1 + l), acc[c]);
      }
      __m256 r = _mm256_mul_ps(va, sum_lanes8(acc));
      if (accumulate) r = _mm256_add_ps(_mm256_loadu_ps(o + j), r);
      _mm256_storeu_ps(o + j, r);
    }
    for (; j < p; ++j) {
      __m256 acc = _mm256_setzero_ps();
      for (std::int64_t l = 0; l < k; l += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + l), _mm256_loadu_ps(b + j * bs1 + l), acc);
      const float r = alpha * sum_lanes(acc);
      o[j] = accumulate ? o[j] + r : r;
    }
  }
}
#else
inline constexpr bool kSmallDotGemm = false;
#endif

}  // namespace strata::ops
