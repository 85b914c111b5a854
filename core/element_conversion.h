// core/element_conversion.h: reading a tensor element and converting it to another element type,
// with PyTorch's defined results where a plain C++ read or cast is undefined: a bool byte other than
// 0 or 1, and a floating value that int64 cannot hold. Every kernel and accessor that reads elements
// of a type it did not write, or converts between element types, goes through these.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "util/bfloat16.h"
#include "util/float16.h"
#include "util/float8.h"

namespace strata {

// Note [Bool elements are loaded as bytes]
// Reading a bool object whose byte is not 0 or 1 is undefined behaviour (UBSan: "load of value 190"),
// and such bytes do occur: empty() leaves memory uninitialised, and a tensor may wrap memory it did
// not write (StorageImpl::wrap, a file mapped by a loader). Like PyTorch's c10::load<bool>, a bool
// element is read as its byte and compared with 0, so any nonzero byte is true. Zero-filling only
// what empty() allocates would leave wrapped memory undefined, and would cost every empty() a pass.
// For other types load_element is a plain read, so kernels lose nothing by using it.
template <typename T>
[[gnu::always_inline]] inline T load_element(const T* p) {
  if constexpr (std::is_same_v<T, bool>) return *reinterpret_cast<const unsigned char*>(p) != 0;
  else return *p;
}

// Note [Float to integer conversion saturates to INT64_MIN]
// A floating value outside int64's range (NaN, +-inf, |x| >= 2^63) makes static_cast<int64_t>
// undefined. PyTorch's CPU kernels on x86 give INT64_MIN for all of these (the "integer indefinite"
// value of cvttss2si/cvttsd2si), in copy_, _to_copy and sum(dtype=int64) alike (checked against
// PyTorch 1.13: tests/golden/conversions_torch.json); strata gives that value by definition, on every
// machine. Values in range truncate toward zero. Floating to int8 goes through int32 as PyTorch's
// does (cvttss2si's 32-bit form, then the low byte): a value outside int32's range, or NaN, gives
// INT32_MIN, whose low byte is 0, and 300.0 gives 44. Floating to bool is `x != 0` (NaN is true), as
// in PyTorch. float8_e4m3fn, float16 and bfloat16 convert through float both ways (Note [float8_e4m3fn
// conversion], Note [float16 conversion], Note [bfloat16 conversion]), so a float64 or an int64 rounds
// twice, as in c10 (whose Half, BFloat16 and Float8_e4m3fn are made from a float); a NaN converted
// to bfloat16 is 0xFFFF, as PyTorch's vectorised conversion writes it (Note [bfloat16 conversion]). Other conversions (to floating types, between integers, which wrap,
// from bool) are plain casts.
// The element types stored in fewer bits than they compute in: each converts to and from float.
template <typename T>
inline constexpr bool is_float_storage_v =
    std::is_same_v<T, Float8_e4m3fn> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename D, typename S>
[[gnu::always_inline]] inline D convert_element(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (is_float_storage_v<S>) {
    return convert_element<D>(static_cast<float>(v));
  } else if constexpr (is_float_storage_v<D>) {
    if constexpr (std::is_same_v<S, bool>) {
      return D(v ? 1.0f : 0.0f);
    } else {
      const auto f = static_cast<float>(v);
      if constexpr (std::is_same_v<D, BFloat16>) {  // Note [bfloat16 conversion]: a tensor's NaN is 0xFFFF
        if (f != f) [[unlikely]] return BFloat16(kBFloat16TensorNaN, BFloat16::FromBits{});
      }
      return D(f);
    }
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    if constexpr (std::is_same_v<D, std::int64_t>) {
      constexpr S kTwoTo63 = S(9223372036854775808.0);
      return v >= -kTwoTo63 && v < kTwoTo63 ? static_cast<D>(v) : std::numeric_limits<D>::min();
    } else {
      static_assert(std::is_same_v<D, std::int8_t>, "int8 and int64 are the integer element types");
      constexpr S kTwoTo31 = S(2147483648.0);
      const std::int32_t wide = v >= -kTwoTo31 && v < kTwoTo31 ? static_cast<std::int32_t>(v) : INT32_MIN;
      return static_cast<D>(wide);
    }
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace strata
