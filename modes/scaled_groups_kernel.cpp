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
//   vector products; the eight sums into the output stay scalar and in order. The groups past the
//   last whole eight go one at a time.
// - Two output rows run together, sharing each activation load and giving the core two independent
//   chains (four spill registers); each weight row is read once for all n activation rows (prefill).
// Group sizes other than 32 and 64 take the plain loops.
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

// One accumulator's lane sum.
inline std::int32_t sum_lanes(__m256i a) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1)));
}

inline __m256i load32(const std::int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// kRows consecutive output rows against one activation row; kChunks 32-byte steps per group.
template <int kRows, int kChunks>
void simd_outputs(const GroupedOperands& p, std::int64_t i, std::int64_t t) {
  constexpr std::int64_t kGroup = 32 * kChunks;
  const std::int64_t k = p.k, groups = k / kGroup;
  const std::int8_t* x = p.x + t * k;
  const float* xs = p.xs + t * groups;
  const std::int8_t* w[kRows];
  const float* ws[kRows];
  for (int r = 0; r < kRows; ++r) w[r] = p.w + (i + r) * k, ws[r] = p.ws + (i + r) * groups;
  float val[kRows] = {};
  std::int64_t g0 = 0;
  for (; g0 + 8 <= groups; g0 += 8) {  // eight groups a round, their lanes summed together
    __m256i acc[kRows][8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      for (int r = 0; r < kRows; ++r) acc[r][j] = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int c = 0; c < kChunks; ++c) {
        const std::int64_t at = (g0 + j) * kGroup + c * 32;
        const __m256i xv = load32(x + at);
        for (int r = 0; r < kRows; ++r) acc[r][j] = dot32(acc[r][j], load32(w[r] + at), xv);
      }
    }
    const __m256 xsv = _mm256_loadu_ps(xs + g0);
    alignas(32) float scaled[kRows][8];
    for (int r = 0; r < kRows; ++r)
      _mm256_store_ps(scaled[r], _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum_lanes8(acc[r])),
                                                             _mm256_loadu_ps(ws[r] + g0)), xsv));
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < 8; ++j) val[r] += scaled[r][j];
  }
  for (; g0 < groups; ++g0) {  // the last groups one at a time
    const std::int64_t at = g0 * kGroup;
    __m256i acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_setzero_si256();
    for (int c = 0; c < kChunks; ++c) {
      const __m256i xv = load32(x + at + c * 32);
      for (int r = 0; r < kRows; ++r) acc[r] = dot32(acc[r], load32(w[r] + at + c * 32), xv);
    }
    for (int r = 0; r < kRows; ++r) val[r] += static_cast<float>(sum_lanes(acc[r])) * ws[r][g0] * xs[g0];
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
