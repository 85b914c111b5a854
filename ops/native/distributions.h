// ops/native/distributions.h: PyTorch's CPU sampling transforms, so the same seed gives the same numbers:
//   uniform_real  (bits & (2^digits - 1)) * 2^-digits, scaled to [from, to)   (float: 24 bits of random(),
//                 double: 53 bits of random64())
//   normal        Box-Muller with the second sample cached on the generator (at::normal_distribution)
//   exponential   -1/lambda * log(1 - u) on one uniform double (Note [exponential_ draws one uniform double per element])
//   normal_fill   the path randn takes for 16+ contiguous elements: uniforms first, then Box-Muller on
//                 blocks of 16 (the last block recomputed over the final 16 elements). As in PyTorch's
//                 AVX2 kernel (what x86 machines run), theta = float(2 pi) * u2 in the element type and
//                 the result is fma(r cos theta, std, mean). PyTorch's vectorised log and sincos are
//                 polynomial approximations, so a value can differ from it in the last bit (1.2e-7 here).
// See aten/src/ATen/core/DistributionsHelper.h and native/cpu/DistributionTemplates.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "../../core/generator.h"

namespace strata::ops {

template <typename T>
T uniform_real(GeneratorImpl& g, T from, T to) {
  if constexpr (std::is_same_v<T, double>) {
    constexpr std::uint64_t mask = (std::uint64_t{1} << std::numeric_limits<double>::digits) - 1;
    constexpr double divisor = 1.0 / static_cast<double>(std::uint64_t{1} << std::numeric_limits<double>::digits);
    const double x = static_cast<double>(g.random64() & mask) * divisor;
    return x * (to - from) + from;
  } else {
    constexpr std::uint32_t mask = (std::uint32_t{1} << std::numeric_limits<float>::digits) - 1;
    constexpr float divisor = 1.0f / static_cast<float>(std::uint32_t{1} << std::numeric_limits<float>::digits);
    const float x = static_cast<float>(g.random() & mask) * divisor;
    return x * (to - from) + from;
  }
}

// at::normal_distribution<double>: one sample, using (and refilling) the generator's cached one.
inline double normal_double(GeneratorImpl& g, double mean, double stdv) {
  std::optional<double>& cached = g.next_double_normal_sample();
  if (cached) {
    const double r = *cached * stdv + mean;
    cached.reset();
    return r;
  }
  const double u1 = uniform_real<double>(g, 0.0, 1.0);
  const double u2 = uniform_real<double>(g, 0.0, 1.0);
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * M_PI * u1;
  cached = r * std::sin(theta);
  return r * std::cos(theta) * stdv + mean;
}

// Note [exponential_ draws one uniform double per element]
// PyTorch 2.8's CPU exponential_ (the default build) runs templates::cpu::exponential_kernel: per
// element in memory order, one at::uniform_real_distribution<double> draw u (53 bits of random64())
// and -1 / lambda * log(1 - u), rounded to self's dtype. The MKL kernel some 2.x releases ran on x86
// (one 32-bit seed from the generator, then MKL's own MCG31 stream) is compiled out of the default
// build ("Disable MKL rng until pytorch#132395 is addressed": `#if ... || 1`, in 2.8 too), and
// Debian's 1.13 (the goldens' PyTorch) is built without MKL, so both take this path and draw the
// same numbers; strata reproduces it (tests/golden/sampling_ops_torch.json checks it exactly).
inline double exponential_double(GeneratorImpl& g, double lambda) {
  const double u = uniform_real<double>(g, 0.0, 1.0);
  return -1.0 / lambda * std::log(1.0 - u);
}

template <typename T>
void normal_fill_16(T* data, T mean, T stdv) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = 1 - data[j];  // [0, 1) -> (0, 1] for log
    const T u2 = data[j + 8];
    const T radius = std::sqrt(-2 * std::log(u1));
    const T theta = static_cast<T>(2.0 * M_PI) * u2;
    data[j] = std::fma(radius * std::cos(theta), stdv, mean);
    data[j + 8] = std::fma(radius * std::sin(theta), stdv, mean);
  }
}

// randn's path for 16 or more contiguous elements.
template <typename T>
void normal_fill(T* data, std::int64_t size, T mean, T stdv, GeneratorImpl& g) {
  for (std::int64_t i = 0; i < size; ++i) data[i] = uniform_real<T>(g, T(0), T(1));
  for (std::int64_t i = 0; i < size - 15; i += 16) normal_fill_16(data + i, mean, stdv);
  if (size % 16 != 0) {
    T* tail = data + size - 16;  // recompute the last 16 values
    for (int i = 0; i < 16; ++i) tail[i] = uniform_real<T>(g, T(0), T(1));
    normal_fill_16(tail, mean, stdv);
  }
}

}  // namespace strata::ops
