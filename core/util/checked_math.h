// core/util/checked_math.h: int64/uint64 arithmetic that reports overflow instead of being undefined.
// Shape code (numel, strides, storage bytes) uses it wherever user-given sizes are multiplied or added.
// It only reports; the callers throw with PyTorch's wording. For arithmetic on tensor *elements*, which
// wraps as in PyTorch, see core/util/wrapping_math.h.
#pragma once

#include <cstdint>

#include "array_ref.h"

namespace strata {

// Each returns true when the exact result does not fit; *out then holds the wrapped result.
inline bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) { return __builtin_add_overflow(a, b, out); }
inline bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t* out) { return __builtin_add_overflow(a, b, out); }

// a * b for non-negative a and b, or INT64_MAX when that overflows. Only for the stride of a size-1
// dimension (expand's new leading dimensions, unsqueeze, view), which is never stepped along, so any value
// is correct there; PyTorch computes it with unchecked (undefined on overflow) arithmetic.
inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return mul_overflows(a, b, &out) ? INT64_MAX : out;
}

// Note [Size products overflow stickily]
// The product of a list of sizes reports overflow if any partial product overflowed, even when a later
// size is 0 ([2^40, 2^40, 0] overflows). This is PyTorch's safe_multiplies_u64; it keeps one rule for
// numel, storage sizes and view shapes, and such shapes are never useful.
inline bool multiply_overflows(ArrayRef<std::int64_t> sizes, std::int64_t* out) {
  std::int64_t product = 1;
  bool overflow = false;
  for (const std::int64_t s : sizes) overflow |= mul_overflows(product, s, &product);
  *out = product;
  return overflow;
}

}  // namespace strata
