// core/util/bfloat16.h: the bfloat16 element type (PyTorch's torch.bfloat16, c10::BFloat16): the top
// half of a float32, one sign bit, eight exponent bits with bias 127, seven mantissa bits; float32's
// range (finite max about 3.39e38) with three significant decimal digits. Stored as two bytes;
// arithmetic converts to float.
#pragma once

#include <bit>
#include <cstdint>

namespace strata {

// Note [bfloat16 conversion]
// To float: exact (the two bytes become the float's high half). From float: round to nearest, ties to
// even, on the float's bits, as c10::BFloat16's round_to_nearest_even does: add 0x7FFF plus the lowest
// kept bit, keep the high 16 bits. The carry moves into the exponent, so the largest floats round to
// infinity, subnormals round on the same grid (bfloat16 has float32's subnormals, shortened), and
// infinities stay. Every NaN becomes 0x7FC0, the positive quiet NaN (c10 does not keep the sign).
// PyTorch's tensor conversion (`to`, `copy_`, and the rounding of a kernel's float results) runs
// through its vectorised cvtfp32_bf16 instead, which writes every NaN as 0xFFFF (checked against
// torch: tests/golden/half_dtypes_torch.json); convert_element does that too (core/element_conversion.h),
// while a single value (fill_, full, a Scalar) gets c10's 0x7FC0, as in PyTorch.
constexpr float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

constexpr std::uint16_t bfloat16_from_float(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0u;
  const std::uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding_bias) >> 16);
}

// A bfloat16 element: its two bytes, converting to and from float as the Note says.
struct BFloat16 {
  std::uint16_t bits;

  BFloat16() = default;
  struct FromBits {};
  constexpr BFloat16(std::uint16_t b, FromBits) : bits(b) {}
  explicit constexpr BFloat16(float value) : bits(bfloat16_from_float(value)) {}
  explicit constexpr operator float() const { return bfloat16_to_float(bits); }
};
static_assert(sizeof(BFloat16) == 2);

// What PyTorch's vectorised float-to-bfloat16 conversion writes for a NaN (see the Note).
inline constexpr std::uint16_t kBFloat16TensorNaN = 0xFFFF;

}  // namespace strata
