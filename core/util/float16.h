// core/util/float16.h: the float16 element type (PyTorch's torch.float16, c10::Half, IEEE 754
// binary16): one sign bit, five exponent bits with bias 15, ten mantissa bits; finite max 65504,
// smallest normal 2^-14, subnormals k * 2^-24. Stored as two bytes; arithmetic converts to float.
#pragma once

#include <bit>
#include <cstdint>

namespace strata {

// Note [float16 conversion]
// To float: exact. From float: round to nearest, ties to even, as c10::Half does (its portable
// fp16_ieee_from_fp32_value and x86's vcvtps2ph agree on every non-NaN input): a magnitude of 65520
// (half-way between 65504 and the next step, 65536) or more becomes an infinity of the input's sign;
// below 2^-14 the grid is the subnormals k * 2^-24, and magnitudes up to 2^-25 (a tie with zero, which
// is even) become a zero of the input's sign. A NaN becomes the quiet NaN 0x7E00 with the input's sign
// (c10's portable conversion; the payload is not kept).
constexpr float float16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  // Normal: rebias the exponent from 15 to 127 and widen the mantissa from 10 to 23 bits.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

constexpr std::uint16_t float16_from_float(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  constexpr std::uint32_t kInfinity = 0x7F800000u;
  constexpr std::uint32_t kOverflow = 0x477FF000u;       // 65520: rounds to 2^16, past the largest finite
  constexpr std::uint32_t kSmallestNormal = 113u << 23;  // 2^-14
  if (magnitude > kInfinity) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (magnitude >= kOverflow) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (magnitude < kSmallestNormal) {
    // k = |value| * 2^24 rounded to the nearest integer, ties to even: |value| = significand * 2^(e - 150)
    // for a normal float, so k = significand >> (126 - e).
    const std::uint32_t e = magnitude >> 23;
    if (e < 102) return sign;  // below 2^-25 (float subnormals included): under half of 2^-24
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // 14..24
    const std::uint32_t k = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    const std::uint32_t rounded = k + (rest > half || (rest == half && (k & 1)) ? 1 : 0);
    return static_cast<std::uint16_t>(sign | rounded);  // rounded == 0x400 is 2^-14, the smallest normal
  }
  // Normal: drop 13 mantissa bits with round-half-even, then rebias the exponent from 127 to 15. A carry
  // out of the mantissa moves into the exponent (kOverflow keeps it below the infinity pattern).
  const std::uint32_t dropped = magnitude & 0x1FFFu;
  std::uint32_t kept = magnitude >> 13;
  if (dropped > 0x1000u || (dropped == 0x1000u && (kept & 1))) ++kept;
  return static_cast<std::uint16_t>(sign | (kept - (112u << 10)));
}

// A float16 element: its two bytes, converting to and from float as the Note says.
struct Float16 {
  std::uint16_t bits;

  Float16() = default;
  struct FromBits {};
  constexpr Float16(std::uint16_t b, FromBits) : bits(b) {}
  explicit constexpr Float16(float value) : bits(float16_from_float(value)) {}
  explicit constexpr operator float() const { return float16_to_float(bits); }
};
static_assert(sizeof(Float16) == 2);

}  // namespace strata
