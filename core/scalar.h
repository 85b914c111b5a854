// core/scalar.h: a number that is not a tensor (PyTorch's `Scalar`: alpha=1, value=0.5, threshold=0).
// It remembers whether it was written as a bool, an integer or a floating number, which decides type
// promotion and how it prints (`1` vs `1.0`).
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>
#include <utility>

#include "dtype.h"
#include "util/error.h"

namespace strata {

class Scalar {
 public:
  enum class Kind : std::uint8_t { Bool, Int, Double };

  Scalar() : Scalar(std::int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { i_ = static_cast<std::int64_t>(v); }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double) { d_ = static_cast<double>(v); }

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  std::int64_t to_int() const { return to<std::int64_t>(); }
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0.0 : i_ != 0; }
  // Throws "value cannot be converted to type int64_t without overflow" for an integer T that cannot
  // hold the value (Note [Scalar to integer conversion is checked]); a fraction is truncated (1.5 -> 1).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return to_integer<T>();
    else return static_cast<T>(to_double());
  }

  // The dtype a tensor made from this number would have (bool, int64 or float32).
  ScalarType default_dtype() const {
    return kind_ == Kind::Bool ? ScalarType::Bool
         : kind_ == Kind::Int  ? ScalarType::Int64
                               : ScalarType::Float32;
  }
  bool equals(double v) const { return to_double() == v; }

 private:
  // Note [Scalar to integer conversion is checked]
  // Converting a double outside an integer type's range (inf, NaN, 1e30) is undefined behaviour in C++;
  // PyTorch's checked_convert throws instead, and so does this, in its words. The double test is
  // lowest <= d < max + 1, both bounds exact powers of two; PyTorch's d <= max rounds max up to 2^63
  // for int64 and lets 2^63 through to an undefined cast.
  template <typename T>
  T to_integer() const {
    using Limits = std::numeric_limits<T>;
    constexpr double lowest = static_cast<double>(Limits::lowest());
    constexpr double max_plus_one = static_cast<double>(Limits::max() / 2 + 1) * 2.0;
    const bool fits = kind_ == Kind::Double ? (d_ >= lowest && d_ < max_plus_one) : std::in_range<T>(i_);
    STRATA_CHECK(fits, "value cannot be converted to type ", integer_type_name<T>(), " without overflow");
    return kind_ == Kind::Double ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  template <typename T>
  static constexpr const char* integer_type_name() {
    constexpr bool s = std::is_signed_v<T>;
    switch (sizeof(T)) {
      case 1: return s ? "int8_t" : "uint8_t";
      case 2: return s ? "int16_t" : "uint16_t";
      case 4: return s ? "int32_t" : "uint32_t";
      default: return s ? "int64_t" : "uint64_t";
    }
  }

  Kind kind_;
  union {
    std::int64_t i_;
    double d_;
  };
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);  // Python's repr: 1, 1.0, True

// A number as an element of type T: Scalar::to<T>, and for float8_e4m3fn, float16 and bfloat16 the
// float conversion (Note [float8_e4m3fn conversion]: 1000.0 becomes NaN, as in PyTorch's fill_; Note
// [float16 conversion]: 1e5 becomes inf).
template <typename T>
T scalar_to_element(const Scalar& s) {
  if constexpr (std::is_same_v<T, Float8_e4m3fn> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(s.to_double()));
  else return s.to<T>();
}

}  // namespace strata
