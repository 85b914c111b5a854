// modes/scaled_groups_kernel.cpp: runq.c's grouped int8 product over a range of output rows, with
// x86 vector instructions where the build targets them and plain loops elsewhere (Note [The grouped
// product's kernel]).
#include "modes/scaled_groups_kernel.h"

#include <algorithm>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::tracer::scaled_groups {

namespace {

// One output: the groups' int32 dots, each scaled in float32 and summed in group order.
template <std::int64_t kGroup>
float reference_output(const std::int8_t* x, const float* xs, const std::int8_t* w, const float* ws, std::int64_t k,
                       std::int64_t group_in) {
  const std::int64_t group = kGroup > 0 ? kGroup : group_in;
  float val = 0.0f;
  for (std::int64_t g = 0; g * group < k; ++g) {
    std::int32_t dot = 0;
    for (std::int64_t j = g * group; j < (g + 1) * group; ++j) dot += x[j] * w[j];
    val += static_cast<float>(dot) * ws[g] * xs[g];
  }
  return val;
}

template <std::int64_t kGroup>
void reference_rows(const GroupedOperands& p, std::int64_t begin, std::int64_t end) {
  const std::int64_t groups = p.k / p.group;
  for (std::int64_t i = begin; i < end; ++i)
    for (std::int64_t t = 0; t < p.n; ++t)
      p.out[t * p.m + i] = reference_output<kGroup>(p.x + t * p.k, p.xs + t * groups, p.w + i * p.k, p.ws + i * groups,
                                                    p.k, p.group);
}

#if defined(__AVX2__)

// Note [The grouped product's kernel]
// Every output is a sum over groups, in order, of float(int32 dot) * w_scale * x_scale (runq.c's
// matmul), so only the int32 dots are open to reordering: they are exact in any order, and the float
// tail below runs in runq.c's order, so every implementation gives runq.c's bits.
// - A dot of 32 int8 pairs is one multiply-add of unsigned by signed bytes summed in fours into int32
//   lanes (vpdpbusd with AVX512-VNNI or AVX-VNNI; with plain AVX2 vpmaddubsw then vpmaddwd, exact as
//   each int16 pair sum is at most 2 * 128 * 127 < 2^15). The unsigned operand is |w| (128 for -128)
//   and the signed one x * sign(w): exact because the activations are in [-127, 127] (quantize_row
//   clamps there), so negating one never overflows, while a weight may be any int8 (a file's).
// - A group of 64 is two such steps into one accumulator; groups are taken eight at a time, one
//   accumulator each, and the eight accumulators' lanes are summed together (three rounds of
//   horizontal adds and one 128-bit swap: about one instruction per group rather than a separate
//   horizontal sum of each), giving one vector of eight group dots whose float scaling is then two
//   vector products; the eight sums into the output stay scalar and in order.
// - Two output rows run together, sharing each activation load and giving the core two independent
//   chains; each weight row is read once for all n activation rows (prefill).
// Groups whose size is not a multiple of 32 take the plain loops.
inline __m256i dot32(__m256i acc, __m256i w, __m256i x) {
  const __m256i u = _mm256_abs_epi8(w);
  const __m256i s = _mm256_sign_epi8(x, w);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}

// The eight accumulators' lane sums, in order, as one vector.
inline __m256i sum_lanes8(const __m256i* a) {
  const __m256i t0 = _mm256_hadd_epi32(a[0], a[1]), t1 = _mm256_hadd_epi32(a[2], a[3]);
  const __m256i t2 = _mm256_hadd_epi32(a[4], a[5]), t3 = _mm256_hadd_epi32(a[6], a[7]);
  const __m256i u0 = _mm256_hadd_epi32(t0, t1), u1 = _mm256_hadd_epi32(t2, t3);
  return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

inline __m256i load32(const std::int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Adds `count` (<= 8) scaled group dots to each of kRows outputs, in group order.
template <int kRows>
inline void add_scaled(float* val, const __m256i* dots, const float* const* ws, const float* xs, int count) {
  alignas(32) float scaled[kRows][8];
  const __m256 xv = _mm256_loadu_ps(xs);  // reads past `count` only inside the caller's padded copy
  for (int r = 0; r < kRows; ++r)
    _mm256_store_ps(scaled[r], _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dots[r]), _mm256_loadu_ps(ws[r])), xv));
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < count; ++j) val[r] += scaled[r][j];
}

// kRows consecutive output rows against one activation row; kChunks 32-byte steps per group.
template <int kRows, int kChunks>
void simd_outputs(const GroupedOperands& p, std::int64_t i, std::int64_t t) {
  const std::int64_t k = p.k, groups = k / p.group;
  const std::int8_t* x = p.x + t * k;
  const float* xs = p.xs + t * groups;
  float val[kRows] = {};
  for (std::int64_t g0 = 0; g0 < groups; g0 += 8) {
    const int count = static_cast<int>(std::min<std::int64_t>(8, groups - g0));
    __m256i acc[kRows][8];
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < 8; ++j) acc[r][j] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      if (j >= count) break;
#pragma GCC unroll 2
      for (int c = 0; c < kChunks; ++c) {
        const std::int64_t at = (g0 + j) * kChunks * 32 + c * 32;
        const __m256i xv = load32(x + at);
        for (int r = 0; r < kRows; ++r) acc[r][j] = dot32(acc[r][j], load32(p.w + (i + r) * k + at), xv);
      }
    }
    __m256i dots[kRows];
    for (int r = 0; r < kRows; ++r) dots[r] = sum_lanes8(acc[r]);
    // The scales of a last partial block are copied into zero-padded buffers, not read past the row.
    alignas(32) float ws_pad[kRows][8] = {}, xs_pad[8] = {};
    const float* wsr[kRows];
    const float* xsr = xs + g0;
    for (int r = 0; r < kRows; ++r) wsr[r] = p.ws + (i + r) * groups + g0;
    if (count < 8) {
      for (int r = 0; r < kRows; ++r) std::copy(wsr[r], wsr[r] + count, ws_pad[r]), wsr[r] = ws_pad[r];
      std::copy(xsr, xsr + count, xs_pad), xsr = xs_pad;
    }
    add_scaled<kRows>(val, dots, wsr, xsr, count);
  }
  for (int r = 0; r < kRows; ++r) p.out[t * p.m + i + r] = val[r];
}

template <int kChunks>
void simd_rows(const GroupedOperands& p, std::int64_t begin, std::int64_t end) {
  std::int64_t i = begin;
  for (; i + 2 <= end; i += 2)
    for (std::int64_t t = 0; t < p.n; ++t) simd_outputs<2, kChunks>(p, i, t);
  for (; i < end; ++i)
    for (std::int64_t t = 0; t < p.n; ++t) simd_outputs<1, kChunks>(p, i, t);
}

#endif  // __AVX2__

}  // namespace

void product_rows_reference(const GroupedOperands& p, std::int64_t begin, std::int64_t end) {
  reference_rows<0>(p, begin, end);
}

void product_rows(const GroupedOperands& p, std::int64_t begin, std::int64_t end) {
#if defined(__AVX2__)
  if (p.group == 32) return simd_rows<1>(p, begin, end);
  if (p.group == 64) return simd_rows<2>(p, begin, end);
#endif
  if (p.group == 32) return reference_rows<32>(p, begin, end);
  if (p.group == 64) return reference_rows<64>(p, begin, end);
  reference_rows<0>(p, begin, end);
}

const char* product_kernel_name(std::int64_t group) {
#if defined(__AVX2__)
  if (group == 32 || group == 64) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return "avx512-vnni";
#elif defined(__AVXVNNI__)
    return "avx-vnni";
#else
    return "avx2";
#endif
  }
#endif
  (void)group;
  return "scalar";
}

}  // namespace strata::tracer::scaled_groups
