// ops/native/small_gemm.h: the kernel for small float and double products whose right operand has
// unit-stride rows (linalg_ops.cpp's gemm; Note [Small products skip Eigen's GEMM] there). It reads
// both operands in place through their strides: no packing, no blocking, no threads.
#pragma once

#include <cstddef>
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

// Note [small_gemm's sums are vectors]
// rows_times_strip keeps its R x kStrip sums in vectors (GCC's and clang's vector extension, 32 bytes
// with AVX, else 16) and writes the update by a row of v as one vector operation per vector of the
// strip. Written as a loop over scalars under `omp simd`, GCC vectorised the R rows' sums across
// the lanes with shuffles through the stack and 128-bit arithmetic, at twice the instructions per
// multiply-add. Each sum still adds the k products in order, as the scalar loop did.
#if defined(__AVX__)
inline constexpr std::size_t kVecBytes = 32;
#else
inline constexpr std::size_t kVecBytes = 16;
#endif
template <typename T>
struct Vec;
template <>
struct Vec<float> {
  typedef float type __attribute__((vector_size(kVecBytes)));
};
template <>
struct Vec<double> {
  typedef double type __attribute__((vector_size(kVecBytes)));
};

// An unaligned load or store of a vector.
template <typename V, typename T>
inline V load_vec(const T* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T>
inline void store_vec(T* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// Rows 0 .. R of o (row stride os), columns 0 .. kStrip, (+)= alpha * x @ v, where x is R x k (strides
// xs0, xs1) and row l of v is v[l * vs .. + kStrip]. The R x kStrip sums stay in registers, and the
// R rows share each row of v (Note [small_gemm's sums are vectors]).
// Always inline: called as a function (GCC's choice for the vector form), it costs more per block
// than small_gemm's loops around it.
template <std::int64_t R, typename T>
[[gnu::always_inline]] inline void rows_times_strip(T* o, std::int64_t os, const T* x, std::int64_t xs0,
                                                    std::int64_t xs1, const T* v, std::int64_t vs, std::int64_t k,
                                                    T alpha, bool accumulate) {
  using V = typename Vec<T>::type;
  constexpr std::int64_t kLanes = kVecBytes / sizeof(T);
  constexpr std::int64_t kVecs = kSmallGemmStrip<T> / kLanes;  // vectors per strip
  V acc[R][kVecs] = {};
  for (std::int64_t l = 0; l < k; ++l) {
    V row[kVecs];
    for (std::int64_t q = 0; q < kVecs; ++q) row[q] = load_vec<V>(v + l * vs + q * kLanes);
    for (std::int64_t r = 0; r < R; ++r) {
      const T s = x[r * xs0 + l * xs1];
      for (std::int64_t q = 0; q < kVecs; ++q) acc[r][q] += s * row[q];
    }
  }
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t q = 0; q < kVecs; ++q) {
      T* out = o + r * os + q * kLanes;
      store_vec(out, accumulate ? load_vec<V>(out) + alpha * acc[r][q] : alpha * acc[r][q]);
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

// The four lane sums of v[0..4), as one vector.
inline __m128 sum_lanes4(const __m256 (&v)[4]) {
  const __m256 u = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

inline float sum_lanes(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

// acc[c] = the lane-wise sums of the products of x[0 .. k) and column c of b (b + c * bs1 .. + k), for
// k a positive multiple of 8. The first products are the sums' starting values (a multiply, not an
// add to zero, which gives the same sums).
template <int C>
inline void column_dots(__m256 (&acc)[C], const float* x, const float* b, std::int64_t bs1, std::int64_t k) {
  __m256 xv = _mm256_loadu_ps(x);
  for (int c = 0; c < C; ++c) acc[c] = _mm256_mul_ps(xv, _mm256_loadu_ps(b + c * bs1));
  for (std::int64_t l = 8; l < k; l += 8) {
    xv = _mm256_loadu_ps(x + l);
    for (int c = 0; c < C; ++c) acc[c] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(b + c * bs1 + l), acc[c]);
  }
}

}  // namespace small_gemm_detail

// out (contiguous, n x p) = alpha * a @ b, or += when `accumulate`, for float a with unit-stride rows
// and b with unit-stride columns (b = w.t() for a row-major w), k a positive multiple of 8: out[i][j] is the
// dot product of row i of a and column j of b, both contiguous. Eight columns at a time share each
// load of a's row and are summed across lanes together (sum_lanes8); then four more the same way
// (sum_lanes4), and the last few one by one.
inline void small_gemm_dots(float* out, const float* a, std::int64_t as0, const float* b, std::int64_t bs1,
                            std::int64_t n, std::int64_t k, std::int64_t p, float alpha, bool accumulate) {
  using small_gemm_detail::column_dots;
  using small_gemm_detail::sum_lanes;
  using small_gemm_detail::sum_lanes4;
  using small_gemm_detail::sum_lanes8;
  const __m256 va = _mm256_set1_ps(alpha);
  for (std::int64_t i = 0; i < n; ++i) {
    const float* x = a + i * as0;
    float* o = out + i * p;
    std::int64_t j = 0;
    for (; j + 8 <= p; j += 8) {
      __m256 acc[8];
      column_dots(acc, x, b + j * bs1, bs1, k);
      __m256 r = _mm256_mul_ps(va, sum_lanes8(acc));
      if (accumulate) r = _mm256_add_ps(_mm256_loadu_ps(o + j), r);
      _mm256_storeu_ps(o + j, r);
    }
    if (j + 4 <= p) {
      __m256 acc[4];
      column_dots(acc, x, b + j * bs1, bs1, k);
      __m128 r = _mm_mul_ps(_mm256_castps256_ps128(va), sum_lanes4(acc));
      if (accumulate) r = _mm_add_ps(_mm_loadu_ps(o + j), r);
      _mm_storeu_ps(o + j, r);
      j += 4;
    }
    for (; j < p; ++j) {
      __m256 acc[1];
      column_dots(acc, x, b + j * bs1, bs1, k);
      const float r = alpha * sum_lanes(acc[0]);
      o[j] = accumulate ? o[j] + r : r;
    }
  }
}
#else
inline constexpr bool kSmallDotGemm = false;
#endif

}  // namespace strata::ops
