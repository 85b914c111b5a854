// modes/scaled_groups.cpp: Q8_0 quantization (export.py's and runq.c's rounding), dequantization and
// runq.c's grouped int8 matrix product (Note [ScaledTensor groups], scaled_tensor.h); the product's
// inner kernel is scaled_groups_kernel.cpp.
#include "modes/scaled_groups.h"

#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "modes/scaled_groups_kernel.h"
#include "ops/functions.h"

namespace strata::tracer::scaled_groups {

namespace {

constexpr float kQMax = 127.0f;
constexpr std::int64_t kMaxGroup = 65536;  // 65536 * 127 * 128 < 2^31

std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  return s + "]";
}

void check_group(std::int64_t cols, std::int64_t group, const char* fn) {
  STRATA_CHECK(group >= 1 && group <= kMaxGroup, "ScaledTensor: ", fn, ": the group size must be 1 to ", kMaxGroup,
               " (a group's int32 dot must not overflow), got ", group);
  STRATA_CHECK(cols % group == 0, "ScaledTensor: ", fn, ": ", cols, " columns are not a whole number of groups of ", group);
}

// Checks the grouped form's two tensors: data int8 [rows, cols], scales float32 [rows, cols / group].
void check_grouped(const Tensor& data, const Tensor& scales, std::int64_t group, const char* fn) {
  STRATA_CHECK(data.defined() && data.dim() == 2 && data.dtype() == ScalarType::Int8 && data.device() == Device::CPU,
               "ScaledTensor: ", fn, ": grouped data must be a 2-D int8 CPU tensor");
  check_group(data.sizes()[1], group, fn);
  STRATA_CHECK(scales.defined() && scales.dtype() == ScalarType::Float32 && scales.dim() == 2 &&
                   scales.sizes()[0] == data.sizes()[0] && scales.sizes()[1] == data.sizes()[1] / group,
               "ScaledTensor: ", fn, ": scales of a grouped ", shape_of(data), " with groups of ", group,
               " must be float32 [", data.sizes()[0], ", ", data.sizes()[1] / group, "], got ",
               scales.defined() ? std::string(dtype_name(scales.dtype())) + " " + shape_of(scales) : "undefined");
}

// C's round() (half away from zero), exactly, in a form that vectorises (std::round is a libm call):
// v - trunc(v) is exact, so comparing it with 0.5 decides the tie as round() does.
inline float round_half_away(float v) {
  const float t = std::trunc(v), d = v - t;
  return d >= 0.5f ? t + 1.0f : d <= -0.5f ? t - 1.0f : t;
}

// One row's groups: s = max|x| / 127, q = x / s rounded (half even or half away), 0 where s = 0.
// NaN never reaches the int8 conversion (a NaN quotient becomes 0).
template <bool kHalfEven>
void quantize_row(const float* x, std::int64_t cols, std::int64_t group, std::int8_t* q, float* s) {
  for (std::int64_t g = 0; g * group < cols; ++g) {
    const float* xg = x + g * group;
    float amax = 0.0f;
    for (std::int64_t i = 0; i < group; ++i) amax = std::max(amax, std::fabs(xg[i]));
    const float scale = amax / kQMax;
    s[g] = scale;
    for (std::int64_t i = 0; i < group; ++i) {
      float r = scale != 0.0f ? xg[i] / scale : 0.0f;
      r = kHalfEven ? std::nearbyint(r) : round_half_away(r);
      r = r == r ? std::clamp(r, -kQMax, kQMax) : 0.0f;
      q[g * group + i] = static_cast<std::int8_t>(r);
    }
  }
}

#if defined(__AVX2__)
// quantize_row<false> for groups of a multiple of 8, eight values a step and to the bit: max is
// exact in any order (vmaxps(v, m) keeps m when v is NaN, as std::max(m, v) does), the quotient is
// the same division, and C's round(), the clamp and NaN -> 0 are done as round_half_away does them.
void quantize_activation_row_avx2(const float* x, std::int64_t cols, std::int64_t group, std::int8_t* q, float* s) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), qmax = _mm256_set1_ps(kQMax);
  for (std::int64_t g = 0; g * group < cols; ++g) {
    const float* xg = x + g * group;
    __m256 m = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < group; i += 8) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xg + i), abs_mask), m);
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float scale = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4))) / kQMax;
    s[g] = scale;
    const __m256 sv = _mm256_set1_ps(scale);
    for (std::int64_t i = 0; i < group; i += 8) {
      const __m256 v = scale != 0.0f ? _mm256_div_ps(_mm256_loadu_ps(xg + i), sv) : _mm256_setzero_ps();
      const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), d = _mm256_sub_ps(v, t);
      __m256 r = _mm256_blendv_ps(t, _mm256_add_ps(t, one), _mm256_cmp_ps(d, half, _CMP_GE_OQ));
      r = _mm256_blendv_ps(r, _mm256_sub_ps(t, one), _mm256_cmp_ps(d, _mm256_sub_ps(_mm256_setzero_ps(), half), _CMP_LE_OQ));
      r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));  // NaN -> 0
      r = _mm256_min_ps(_mm256_max_ps(r, _mm256_sub_ps(_mm256_setzero_ps(), qmax)), qmax);
      const __m256i n = _mm256_cvttps_epi32(r);
      const __m128i n16 = _mm_packs_epi32(_mm256_castsi256_si128(n), _mm256_extracti128_si256(n, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(q + g * group + i), _mm_packs_epi16(n16, n16));
    }
  }
}
#endif

// runq.c's quantize() of one activation row.
void quantize_activation_row(const float* x, std::int64_t cols, std::int64_t group, std::int8_t* q, float* s) {
#if defined(__AVX2__)
  if (group % 8 == 0) return quantize_activation_row_avx2(x, cols, group, q, s);
#endif
  quantize_row<false>(x, cols, group, q, s);
}

template <bool kHalfEven>
Quantized quantize_matrix(const Tensor& x, std::int64_t group, const char* fn) {
  STRATA_CHECK(x.defined() && !x.subclass() && x.dim() == 2 && x.device() == Device::CPU && is_floating_point(x.dtype()),
               "ScaledTensor: ", fn, ": expects a plain 2-D floating-point CPU tensor, got ",
               x.defined() ? std::string(dtype_name(x.dtype())) + " " + shape_of(x) : "an undefined tensor");
  const std::int64_t rows = x.sizes()[0], cols = x.sizes()[1];
  check_group(cols, group, fn);
  const Tensor x32 = (x.dtype() == ScalarType::Float32 ? x : x.to(ScalarType::Float32)).contiguous();
  Quantized out{empty({rows, cols}, {ScalarType::Int8, std::nullopt}),
                empty({rows, cols / group}, {ScalarType::Float32, std::nullopt})};
  const float* src = x32.data_ptr<float>();
  if (kHalfEven)  // weights: a non-finite one has no scale (activations are the model's business)
    for (std::int64_t i = 0; i < rows * cols; ++i)
      STRATA_CHECK(std::isfinite(src[i]), "ScaledTensor: ", fn, " of a tensor holding ", src[i], " at element ", i,
                   " (a non-finite value has no scale)");
  std::int8_t* q = out.data.data_ptr<std::int8_t>();
  float* s = out.scales.data_ptr<float>();
  parallel_for(0, rows, std::max<std::int64_t>(1, (1 << 16) / std::max<std::int64_t>(cols, 1)),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t r = begin; r < end; ++r)
                   quantize_row<kHalfEven>(src + r * cols, cols, group, q + r * cols, s + r * (cols / group));
               });
  return out;
}

}  // namespace

Quantized quantize_weights(const Tensor& x, std::int64_t group) {
  return quantize_matrix<true>(x, group, "grouped quantization");
}

Quantized quantize_activations(const Tensor& x, std::int64_t group) {
  return quantize_matrix<false>(x, group, "activation quantization");
}

Tensor dequantize(const Tensor& data_in, const Tensor& scales_in, std::int64_t group) {
  check_grouped(data_in, scales_in, group, "dequantize");
  const Tensor data = data_in.contiguous(), scales = scales_in.contiguous();
  const std::int64_t rows = data.sizes()[0], cols = data.sizes()[1];
  Tensor out = empty({rows, cols}, {ScalarType::Float32, std::nullopt});
  const std::int8_t* q = data.data_ptr<std::int8_t>();
  const float* s = scales.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (std::int64_t i = 0; i < rows * cols; ++i) o[i] = static_cast<float>(q[i]) * s[i / group];
  return out;
}

Tensor matmul(const Tensor& x_in, const Tensor& data_in, const Tensor& scales_in, std::int64_t group) {
  check_grouped(data_in, scales_in, group, "grouped mm");
  const std::int64_t m = data_in.sizes()[0], k = data_in.sizes()[1];
  STRATA_CHECK(x_in.defined() && !x_in.subclass() && x_in.dim() == 2 && x_in.dtype() == ScalarType::Float32 &&
                   x_in.sizes()[1] == k,
               "ScaledTensor: grouped mm: expected a float32 [n, ", k, "] left operand for a grouped [", k, ", ", m,
               "] right operand, got ", x_in.defined() ? std::string(dtype_name(x_in.dtype())) + " " + shape_of(x_in) : "undefined");
  const std::int64_t n = x_in.sizes()[0], groups = k / group;
  // The activations are quantized into plain buffers (a decode step's are 288 bytes: no tensors).
  const Tensor x = x_in.contiguous(), data = data_in.contiguous(), scales = scales_in.contiguous();
  std::vector<std::int8_t> xq(static_cast<std::size_t>(n * k));
  std::vector<float> xs(static_cast<std::size_t>(n * groups));
  const float* xd = x.data_ptr<float>();
  for (std::int64_t t = 0; t < n; ++t)
    quantize_activation_row(xd + t * k, k, group, xq.data() + t * k, xs.data() + t * groups);
  Tensor out = empty({n, m}, {ScalarType::Float32, std::nullopt});
  const GroupedOperands p{xq.data(), xs.data(), data.data_ptr<std::int8_t>(), scales.data_ptr<float>(),
                          out.data_ptr<float>(), n, m, k, group};
  // Threads only for products of more than 2^18 multiply-adds (a decode step's output head, a prompt's
  // projections): a parallel region costs microseconds, and far more when the cores are shared.
  const std::int64_t grain = std::max<std::int64_t>(1, (1 << 18) / std::max<std::int64_t>(k * n, 1));
  parallel_for(0, m, grain, [&](std::int64_t begin, std::int64_t end) { product_rows(p, begin, end); });
  return out;
}

Tensor embedding(const Tensor& data_in, const Tensor& scales_in, std::int64_t group, const Tensor& indices_in) {
  check_grouped(data_in, scales_in, group, "embedding");
  STRATA_CHECK(indices_in.defined() && !indices_in.subclass() && indices_in.dtype() == ScalarType::Int64,
               "ScaledTensor: embedding: indices must be an int64 tensor");
  const Tensor data = data_in.contiguous(), scales = scales_in.contiguous();
  const std::vector<std::int64_t> indices = indices_in.to_vector<std::int64_t>();
  const std::int64_t rows = data.sizes()[0], cols = data.sizes()[1];
  std::vector<std::int64_t> sizes(indices_in.sizes().begin(), indices_in.sizes().end());
  sizes.push_back(cols);
  Tensor out = empty(sizes, {ScalarType::Float32, std::nullopt});
  float* o = out.data_ptr<float>();
  const std::int8_t* q = data.data_ptr<std::int8_t>();
  const float* s = scales.data_ptr<float>();
  for (std::size_t r = 0; r < indices.size(); ++r) {
    const std::int64_t row = indices[r];
    STRATA_CHECK(row >= 0 && row < rows, "ScaledTensor: embedding: index ", row, " is out of range for ", rows, " rows");
    for (std::int64_t c = 0; c < cols; ++c)
      o[static_cast<std::int64_t>(r) * cols + c] = static_cast<float>(q[row * cols + c]) * s[row * (cols / group) + c / group];
  }
  return out;
}

}  // namespace strata::tracer::scaled_groups
