// core/util/wrapping_math.h: +, -, * and unary minus on tensor elements that wrap around on integer
// overflow (two's complement), as PyTorch's integer kernels do, instead of being undefined behaviour.
// Floating and bool types use the plain operators. For overflow *checks* on sizes see core/util/checked_math.h.
#pragma once

#include <type_traits>

namespace strata {

// Note [Integer kernels wrap]
// Signed overflow is undefined in C++, so int64 kernels compute in the unsigned type of the same width,
// where overflow is defined modulo 2^64, and convert back (defined since C++20). The result is the
// two's-complement wrap PyTorch gives (e.g. INT64_MAX + 1 == INT64_MIN). Types narrower than int are
// widened to unsigned int first, so the unsigned arithmetic never promotes back to signed int.
namespace detail {
template <typename T>
inline constexpr bool wraps_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
using WrapUnsigned = std::make_unsigned_t<std::common_type_t<T, int>>;
}  // namespace detail

template <typename T>
constexpr T wrapping_add(T a, T b) {
  if constexpr (detail::wraps_v<T>) {
    using U = detail::WrapUnsigned<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}

template <typename T>
constexpr T wrapping_sub(T a, T b) {
  if constexpr (detail::wraps_v<T>) {
    using U = detail::WrapUnsigned<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<T>(a - b);
  }
}

template <typename T>
constexpr T wrapping_mul(T a, T b) {
  if constexpr (detail::wraps_v<T>) {
    using U = detail::WrapUnsigned<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

template <typename T>
constexpr T wrapping_neg(T a) {
  if constexpr (detail::wraps_v<T>) {
    using U = detail::WrapUnsigned<T>;
    return static_cast<T>(U(0) - static_cast<U>(a));
  } else {
    return static_cast<T>(-a);
  }
}

}  // namespace strata
