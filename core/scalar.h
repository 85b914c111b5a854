// core/scalar.h: a number that is not a tensor (PyTorch's `Scalar`: alpha=1, value=0.5, threshold=0).
// It remembers whether it was written as a bool, an integer or a floating number, which decides type
// promotion and how it prints (`1` vs `1.0`).
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "core/dtype.h"

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
  std::int64_t to_int() const { return kind_ == Kind::Double ? static_cast<std::int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0.0 : i_ != 0; }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int());
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
  Kind kind_;
  union {
    std::int64_t i_;
    double d_;
  };
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);  // Python's repr: 1, 1.0, True

}  // namespace strata
