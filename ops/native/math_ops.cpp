// ops/native/math_ops.cpp: the unary math ops and their scalar-parameter kin: sqrt, rsqrt, log, sin,
// cos (integer and bool inputs compute in float32, as exp), abs and sgn (the input's dtype),
// pow (Tensor_Scalar, and Tensor_Tensor broadcast as the binary ops) and clamp (the dtype of self promoted with the numbers). One translation unit
// and one templated loop (math_loop) for all of them: each op is a lambda over an element.
#include <cmath>
#include <limits>
#include <optional>

#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

TensorSpec unary_spec(const Tensor& self, ScalarType dtype) { return {{}, dtype, output_strides(self.sizes(), {&self}), &self}; }

// out = fn(x) over out's elements, x read in out's dtype, for the types `Types` admits (a bool
// template argument per kind: floating, integer, bool). `kernel` names PyTorch's kernel in the
// "not implemented" error of a type it refuses.
template <bool Integers, bool Bools, typename Fn>
void math_loop(const Tensor& out, const Tensor& self, std::string_view kernel, const Fn& fn) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    constexpr bool admitted = std::is_floating_point_v<T> || (std::is_same_v<T, bool> ? Bools : Integers);
    if constexpr (admitted) {
      unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [fn](T x) { return fn(x); });
    } else {
      throw Error(strata::detail::str_cat(kernel, " not implemented for '", dtype_c10_name(out.dtype()), "'"));
    }
  });
}

// ---- sqrt, rsqrt, log, sin, cos: floating results (to_float_dtype) ----
TensorSpec float_meta(const Tensor& self) { return unary_spec(self, to_float_dtype(self.dtype())); }

void sqrt_cpu(const Tensor& out, const Tensor& self) {
  math_loop<false, false>(out, self, "\"sqrt_cpu\"", [](auto x) { return std::sqrt(x); });
}
void rsqrt_cpu(const Tensor& out, const Tensor& self) {
  math_loop<false, false>(out, self, "\"rsqrt_cpu\"", [](auto x) { return decltype(x)(1) / std::sqrt(x); });
}
void log_cpu(const Tensor& out, const Tensor& self) {
  math_loop<false, false>(out, self, "\"log_cpu\"", [](auto x) { return std::log(x); });
}
void sin_cpu(const Tensor& out, const Tensor& self) {
  math_loop<false, false>(out, self, "\"sin_cpu\"", [](auto x) { return std::sin(x); });
}
void cos_cpu(const Tensor& out, const Tensor& self) {
  math_loop<false, false>(out, self, "\"cos_cpu\"", [](auto x) { return std::cos(x); });
}

// ---- abs (no bools: PyTorch's "abs_cpu" refuses them), sgn (the sign as -1, 0 or 1; bools stay) ----
TensorSpec same_dtype_meta(const Tensor& self) { return unary_spec(self, self.dtype()); }
void abs_cpu(const Tensor& out, const Tensor& self) {
  math_loop<true, false>(out, self, "\"abs_cpu\"", [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) return std::abs(x);
    else return x < T(0) ? wrapping_neg(x) : x;
  });
}
// (0 < x) - (x < 0), PyTorch's sign_kernel for real types: NaN gives 0.
void sgn_cpu(const Tensor& out, const Tensor& self) {
  math_loop<true, true>(out, self, "\"sgn_cpu\"", [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) return x;
    else return static_cast<T>((T(0) < x) - (x < T(0)));
  });
}

// ---- pow.Tensor_Scalar ----
// PyTorch's powi: exponentiation by squaring (wrapping, as integer kernels do); a negative exponent
// gives 1, +-1 or 0 (the meta function refuses it for integer tensors and integer exponents).
template <typename T>
T powi(T base, T exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (-exp) % 2 ? T(-1) : T(1);
    return 0;
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = wrapping_mul(result, base);
    exp /= 2;
    base = wrapping_mul(base, base);
  }
  return result;
}

TensorSpec pow_meta(const Tensor& self, Scalar exponent) {
  const ScalarType dtype = result_type(self, exponent);
  STRATA_CHECK(is_floating_point(dtype) || exponent.is_floating_point() || exponent.is_bool() || exponent.to_int() >= 0,
               "Integers to negative integer powers are not allowed.");
  return unary_spec(self, dtype);
}
// PyTorch's pow_tensor_scalar kernel: the exponents 2, 3, 0.5, -0.5, -1 and -2 as products, roots and
// reciprocals (so x^2 is x * x exactly), any other through std::pow in the tensor's type.
void pow_cpu(const Tensor& out, const Tensor& self, Scalar exponent) {
  const double e = exponent.to_double();
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const Operand x = Operand::in_dtype(self, out.dtype());
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("\"pow\" not implemented for 'Bool'");  // a bool tensor to a bool power
    } else if constexpr (std::is_integral_v<T>) {
      const T p = exponent.to<T>();
      unary_loop<T>(out, x, [p](T v) { return powi(v, p); });
    } else if (e == 2) {
      unary_loop<T>(out, x, [](T v) { return v * v; });
    } else if (e == 3) {
      unary_loop<T>(out, x, [](T v) { return v * v * v; });
    } else if (e == 0.5) {
      unary_loop<T>(out, x, [](T v) { return std::sqrt(v); });
    } else if (e == -0.5) {
      unary_loop<T>(out, x, [](T v) { return T(1) / std::sqrt(v); });
    } else if (e == -1) {
      unary_loop<T>(out, x, [](T v) { return T(1) / v; });
    } else if (e == -2) {
      unary_loop<T>(out, x, [](T v) { return T(1) / (v * v); });
    } else {
      const T p = static_cast<T>(e);
      unary_loop<T>(out, x, [p](T v) { return std::pow(v, p); });
    }
  });
}

// ---- pow.Tensor_Tensor, pow_.Tensor ----
// PyTorch's pow_tensor_tensor kernel: powi for integers (a negative exponent gives 1, +-1 or 0, as
// the exponents are data and not checked), std::pow in the promoted floating type.
TensorSpec pow_tensor_meta(const Tensor& self, const Tensor& exponent) {
  const ScalarType dtype = result_type(self, exponent);
  STRATA_CHECK(dtype != ScalarType::Bool, "\"pow\" not implemented for 'Bool'");
  DimVector shape = broadcast_shapes(self.sizes(), exponent.sizes());
  DimVector strides = output_strides(shape, {&self, &exponent});
  return {std::move(shape), dtype, std::move(strides)};
}
void pow_tensor_cpu(const Tensor& out, const Tensor& self, const Tensor& exponent) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>)
      promoting_binary_loop<T>(out, self, exponent, [](T x, T y) { return std::pow(x, y); });
    else if constexpr (!std::is_same_v<T, bool>)  // bool is refused by the meta function
      promoting_binary_loop<T>(out, self, exponent, [](T x, T y) { return powi(x, y); });
  });
}
void pow__tensor_check(const Tensor& self, const Tensor& exponent) {
  STRATA_CHECK(result_type(self, exponent) != ScalarType::Bool, "\"pow\" not implemented for 'Bool'");
  check_inplace(self, exponent);
}
void pow__tensor_cpu(const Tensor& self, const Tensor& exponent) { pow_tensor_cpu(self, self, exponent); }

// ---- clamp(self, min, max): max(min(x, max), min) as PyTorch orders it, NaN kept ----
// The dtype is self's promoted with the given bounds (PyTorch's clamp meta: a bool tensor clamped by
// integers is int64, an integer one by a float is float32). Both bounds NaN-free, or NaN everywhere.
// A bound counts as a wrapped number: it changes the dtype only when its kind (bool < integer < floating)
// is higher than self's, and then gives its own (int64, or the default float32).
TensorSpec clamp_meta(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  STRATA_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const auto kind = [](ScalarType t) { return t == ScalarType::Bool ? 0 : is_floating_point(t) ? 2 : 1; };
  ScalarType dtype = self.dtype();
  for (const std::optional<Scalar>* bound : {&min, &max}) {
    if (!*bound) continue;
    const ScalarType b = (*bound)->is_floating_point() ? ScalarType::Float32
                         : (*bound)->is_bool()          ? ScalarType::Bool
                                                        : ScalarType::Int64;
    if (kind(b) > kind(dtype)) dtype = b;
  }
  return unary_spec(self, dtype);
}
void clamp_cpu(const Tensor& out, const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const Operand x = Operand::in_dtype(self, out.dtype());
    const bool has_min = min.has_value(), has_max = max.has_value();
    const T lo = has_min ? min->to<T>() : T(0), hi = has_max ? max->to<T>() : T(0);
    if constexpr (std::is_floating_point_v<T>) {
      if ((has_min && std::isnan(lo)) || (has_max && std::isnan(hi))) {
        unary_loop<T>(out, x, [](T) { return std::numeric_limits<T>::quiet_NaN(); });
        return;
      }
    }
    unary_loop<T>(out, x, [=](T v) {
      if (v != v) return v;  // NaN
      if (has_min && v < lo) v = lo;
      if (has_max && hi < v) v = hi;
      return v;
    });
  });
}

}  // namespace

// register_math_ops(): the rows of math_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/math_ops_rows.inc"

}  // namespace strata::ops
