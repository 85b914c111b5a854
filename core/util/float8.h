// core/util/float8.h: the float8_e4m3fn element type (PyTorch's torch.float8_e4m3fn, OCP FP8 E4M3): one
// sign bit, four exponent bits with bias 7, three mantissa bits; finite max 448, no infinities, NaN
// is S.1111.111. Stored as one byte; arithmetic converts to float.
#pragma once

#include <bit>
#include <cstdint>

namespace strata {

// Note [float8_e4m3fn conversion]
// To float: exact (every float8 value is a float). From float: round to nearest, ties to even, on the
// format's grid extended by one step past 448 (480, the pattern S.1111.111, which is NaN): a value
// that rounds to 480 or beyond, an infinity or a NaN gives NaN with the input's sign (0x7F / 0xFF).
// Values are not saturated to 448: that is PyTorch's plain conversion (c10::Float8_e4m3fn), which
// `to`, `copy_` and `_to_copy` use; a caller that wants saturation clamps first, as torchao does.
// Below 2^-6 the grid is the subnormals k * 2^-9 (k = 0..7); magnitudes up to 2^-10 round to zero
// (2^-10 is a tie between 0 and 2^-9, and zero is even).
constexpr float float8_e4m3fn_to_float(std::uint8_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80) << 24;
  const std::uint32_t exponent = (bits >> 3) & 0xF;
  const std::uint32_t mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::bit_cast<float>(sign | 0x7FC00000u);  // NaN
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-9, exact in float
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 512.0f);
    return sign ? -magnitude : magnitude;
  }
  // Normal: rebias the exponent from 7 to 127 and widen the mantissa from 3 to 23 bits.
  return std::bit_cast<float>(sign | ((exponent + 120) << 23) | (mantissa << 20));
}

constexpr std::uint8_t float8_e4m3fn_from_float(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  constexpr std::uint32_t kSmallestNormal = 121u << 23;  // 2^-6
  constexpr std::uint32_t kNaNThreshold = 0x43F00000u;   // 480: rounds to S.1111.111; also inf and NaN
  if (magnitude >= kNaNThreshold) return static_cast<std::uint8_t>(sign | 0x7F);
  if (magnitude < kSmallestNormal) {
    // k = |value| * 2^9 rounded to the nearest integer, ties to even, by integer arithmetic on the
    // float's significand: |value| = significand * 2^(e - 150), so k = significand >> (141 - e).
    const std::uint32_t e = magnitude >> 23;
    if (e < 116) return sign;  // below 2^-11: well under half of 2^-9
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;  // e >= 116: normal float
    const std::uint32_t shift = 141 - e;                                    // 21..25
    const std::uint32_t k = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    const std::uint32_t rounded = k + (rest > half || (rest == half && (k & 1)) ? 1 : 0);
    return static_cast<std::uint8_t>(sign | rounded);  // rounded == 8 is 2^-6, the smallest normal
  }
  // Normal: drop 20 mantissa bits with round-half-even, then rebias the exponent from 127 to 7. A
  // carry out of the mantissa moves into the exponent, which is what rounding up a power of two does.
  const std::uint32_t dropped = magnitude & 0xFFFFFu;
  std::uint32_t kept = magnitude >> 20;
  if (dropped > 0x80000u || (dropped == 0x80000u && (kept & 1))) ++kept;
  return static_cast<std::uint8_t>(sign | (kept - (120u << 3)));
}

// A float8_e4m3fn element: its byte, converting to and from float as the Note says.
struct Float8_e4m3fn {
  std::uint8_t bits;

  Float8_e4m3fn() = default;
  struct FromBits {};
  constexpr Float8_e4m3fn(std::uint8_t b, FromBits) : bits(b) {}
  explicit constexpr Float8_e4m3fn(float value) : bits(float8_e4m3fn_from_float(value)) {}
  explicit constexpr operator float() const { return float8_e4m3fn_to_float(bits); }
};
static_assert(sizeof(Float8_e4m3fn) == 1);

inline constexpr float kFloat8E4M3Max = 448.0f;

}  // namespace strata
