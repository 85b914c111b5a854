// ops/native/pointwise_ops.cpp: elementwise arithmetic with broadcasting and type promotion:
// add / add_ / sub / sub.Scalar (alpha), mul / mul_ / mul_.Scalar, div / div.Scalar / div_.Scalar (true division), neg, exp, relu, threshold_backward.
// Each op is a meta function (validate, output shape and dtype) and a CPU function (compute only).
#include <cmath>

#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
#include "ops/op_table.h"
#include "ops/native/output_layout.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

// x + s * y with one rounding for floating types, as PyTorch's vectorised add does (fmadd); integers
// wrap on overflow (Note [Integer kernels wrap]).
template <typename T>
T muladd(T y, T s, T x) {
  if constexpr (std::is_floating_point_v<T>) return std::fma(y, s, x);
  else return wrapping_add(x, wrapping_mul(s, y));
}

void check_alpha(ScalarType dtype, const Scalar& alpha) {
  STRATA_CHECK(is_floating_point(dtype) || !alpha.is_floating_point(),
               "For integral input tensors, argument alpha must not be a floating point number.");
  STRATA_CHECK(dtype == ScalarType::Bool || !alpha.is_bool(), "Boolean alpha only supported for Boolean results.");
}

// Note [Pointwise metas inline into their kernels]
// A pointwise meta function is a few comparisons and a TensorSpec. Called out of line it costs a
// tiny op a call and a ~150-byte spec returned through memory; inlined into its unboxed and boxed
// kernels, the spec's empty shape vectors fold away. So the metas here, and the spec helpers they
// share, are always inline; broadcasting, rare and larger, stays out of line.
[[gnu::noinline]] TensorSpec broadcast_binary_spec(const Tensor& self, const Tensor& other, ScalarType dtype) {
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  DimVector strides = output_strides(shape, {&self, &other});
  return {std::move(shape), dtype, std::move(strides)};
}
[[gnu::always_inline]] inline TensorSpec binary_spec(const Tensor& self, const Tensor& other, ScalarType dtype) {
  if (self.sizes() == other.sizes()) [[likely]]
    return {{}, dtype, output_strides(self.sizes(), {&self, &other}), &self};
  return broadcast_binary_spec(self, other, dtype);
}

[[gnu::always_inline]] inline TensorSpec unary_spec(const Tensor& self, ScalarType dtype) { return {{}, dtype, output_strides(self.sizes(), {&self}), &self}; }

// out = self + alpha * other, computed in out's dtype.
void add_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (alpha.equals(1)) {
      promoting_binary_loop<T>(out, self, other, [](T x, T y) { return wrapping_add(x, y); });
    } else {
      const T s = alpha.to<T>();
      promoting_binary_loop<T>(out, self, other, [s](T x, T y) { return muladd(y, s, x); });
    }
  });
}

void mul_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    promoting_binary_loop<T>(out, self, other, [](T x, T y) { return wrapping_mul(x, y); });
  });
}

// ---- mul.Scalar: self * a C++ number (what C++ formulas such as maybe_multiply dispatch) ----
[[gnu::always_inline]] inline TensorSpec mul_scalar_meta(const Tensor& self, Scalar other) { return unary_spec(self, result_type(self, other)); }
void mul_scalar_cpu(const Tensor& out, const Tensor& self, Scalar other) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T s = other.to<T>();
    unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [s](T x) { return wrapping_mul(x, s); });
  });
}

// ---- mul_.Scalar: self *= a C++ number, the product in self's dtype ----
void mul__scalar_check(const Tensor& self, Scalar other) {
  assert_no_internal_overlap(self);
  const ScalarType common = result_type(self, other);
  STRATA_CHECK(can_cast(common, self.dtype()), "result type ", common, " can't be cast to the desired output type ",
               self.dtype());
}
void mul__scalar_cpu(const Tensor& self, Scalar other) { mul_scalar_cpu(self, self, other); }

// ---- add.Scalar: self + alpha * a C++ number (PyTorch's add with a wrapped-number other) ----
[[gnu::always_inline]] inline TensorSpec add_scalar_meta(const Tensor& self, Scalar other, Scalar alpha) {
  const ScalarType dtype = result_type(self, other);
  check_alpha(dtype, alpha);
  return unary_spec(self, dtype);
}
void add_scalar_cpu(const Tensor& out, const Tensor& self, Scalar other, Scalar alpha) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T o = other.to<T>();
    const Operand x = Operand::in_dtype(self, out.dtype());
    if (alpha.equals(1)) {
      unary_loop<T>(out, x, [o](T v) { return wrapping_add(v, o); });
    } else {
      const T s = alpha.to<T>();
      unary_loop<T>(out, x, [o, s](T v) { return muladd(o, s, v); });
    }
  });
}

// ---- add.Tensor, add_.Tensor ----
[[gnu::always_inline]] inline TensorSpec add_meta(const Tensor& self, const Tensor& other, Scalar alpha) {
  const ScalarType dtype = result_type(self, other);
  check_alpha(dtype, alpha);
  return binary_spec(self, other, dtype);
}
void add_cpu(const Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha) { add_out(out, self, other, alpha); }

void add__check(const Tensor& self, const Tensor& other, Scalar alpha) {
  check_inplace(self, other);
  check_alpha(result_type(self, other), alpha);
}
void add__cpu(const Tensor& self, const Tensor& other, Scalar alpha) { add_out(self, self, other, alpha); }

// ---- sub.Tensor ----
inline void check_sub_dtypes(const Tensor& self, const Tensor& other) {
  STRATA_CHECK(self.dtype() != ScalarType::Bool || other.dtype() != ScalarType::Bool,
               "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
               "operator instead.");
  STRATA_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
               "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
               "mask, use the `~` or `logical_not()` operator instead.");
}
[[gnu::always_inline]] inline TensorSpec sub_meta(const Tensor& self, const Tensor& other, Scalar alpha) {
  check_sub_dtypes(self, other);
  return add_meta(self, other, alpha);
}
void sub_cpu(const Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha) {
  const Scalar negated = alpha.is_floating_point() ? Scalar(-alpha.to_double()) : Scalar(wrapping_neg(alpha.to_int()));
  add_out(out, self, other, negated);
}

// ---- sub.Scalar: self - alpha * a C++ number ----
[[gnu::always_inline]] inline TensorSpec sub_scalar_meta(const Tensor& self, Scalar other, Scalar alpha) {
  STRATA_CHECK(self.dtype() != ScalarType::Bool || !other.is_bool(),
               "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
               "operator instead.");
  STRATA_CHECK(self.dtype() != ScalarType::Bool && !other.is_bool(),
               "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
               "mask, use the `~` or `logical_not()` operator instead.");
  return add_scalar_meta(self, other, alpha);
}
void sub_scalar_cpu(const Tensor& out, const Tensor& self, Scalar other, Scalar alpha) {
  const Scalar negated = alpha.is_floating_point() ? Scalar(-alpha.to_double()) : Scalar(wrapping_neg(alpha.to_int()));
  add_scalar_cpu(out, self, other, negated);
}

// ---- sub_.Tensor ----
void sub__check(const Tensor& self, const Tensor& other, Scalar alpha) {
  check_sub_dtypes(self, other);
  add__check(self, other, alpha);
}
void sub__cpu(const Tensor& self, const Tensor& other, Scalar alpha) { sub_cpu(self, self, other, alpha); }

// ---- mul.Tensor, mul_.Tensor ----
[[gnu::always_inline]] inline TensorSpec mul_meta(const Tensor& self, const Tensor& other) { return binary_spec(self, other, result_type(self, other)); }
void mul_cpu(const Tensor& out, const Tensor& self, const Tensor& other) { mul_out(out, self, other); }
void mul__check(const Tensor& self, const Tensor& other) { check_inplace(self, other); }
void mul__cpu(const Tensor& self, const Tensor& other) { mul_out(self, self, other); }

// ---- div.Tensor: true division; integer inputs give float32 (to_float_dtype) ----
[[gnu::always_inline]] inline TensorSpec div_meta(const Tensor& self, const Tensor& other) {
  return binary_spec(self, other, to_float_dtype(result_type(self, other)));
}
void div_cpu(const Tensor& out, const Tensor& self, const Tensor& other) {
  visit_floating(out.dtype(), "div", [&](auto zero) {
    using T = decltype(zero);
    promoting_binary_loop<T>(out, self, other, [](T x, T y) { return x / y; });
  });
}

// ---- div.Scalar: self / a C++ number, true division (what C++ formulas such as mean's backward
// dispatch: PyTorch's `grad / n` with n a number) ----
[[gnu::always_inline]] inline TensorSpec div_scalar_meta(const Tensor& self, Scalar other) {
  return unary_spec(self, to_float_dtype(result_type(self, other)));
}
void div_scalar_cpu(const Tensor& out, const Tensor& self, Scalar other) {
  visit_floating(out.dtype(), "div", [&](auto zero) {
    using T = decltype(zero);
    const T s = other.to<T>();
    unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [s](T x) { return x / s; });
  });
}

// ---- div_.Scalar: self /= a C++ number, in self's (floating) dtype; dropout's noise.div_(1 - p) ----
void div__scalar_check(const Tensor& self, Scalar other) {
  assert_no_internal_overlap(self);
  const ScalarType common = to_float_dtype(result_type(self, other));
  STRATA_CHECK(can_cast(common, self.dtype()), "result type ", common, " can't be cast to the desired output type ",
               self.dtype());
}
void div__scalar_cpu(const Tensor& self, Scalar other) {
  visit_floating(self.dtype(), "div_", [&](auto zero) {
    using T = decltype(zero);
    const T s = other.to<T>();
    unary_loop<T>(self, self, [s](T x) { return x / s; });
  });
}

// ---- neg ----
[[gnu::always_inline]] inline TensorSpec neg_meta(const Tensor& self) {
  STRATA_CHECK(self.dtype() != ScalarType::Bool,
               "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
               "use the `~` or `logical_not()` operator instead.");
  return unary_spec(self, self.dtype());
}
void neg_cpu(const Tensor& out, const Tensor& self) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    unary_loop<T>(out, self, [](T x) { return wrapping_neg(x); });
  });
}

// ---- exp (integers and bools compute in float32: to_float_dtype) ----
[[gnu::always_inline]] inline TensorSpec exp_meta(const Tensor& self) {
  return unary_spec(self, to_float_dtype(self.dtype()));
}
void exp_cpu(const Tensor& out, const Tensor& self) {
  visit_floating(out.dtype(), "exp", [&](auto zero) {
    using T = decltype(zero);
    unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [](T x) { return std::exp(x); });
  });
}

// ---- reciprocal: 1 / x (integers and bools compute in float32, as exp) ----
void reciprocal_cpu(const Tensor& out, const Tensor& self) {
  visit_floating(out.dtype(), "reciprocal", [&](auto zero) {
    using T = decltype(zero);
    unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [](T x) { return T(1) / x; });
  });
}

// ---- relu (NaN propagates, as clamp_min does) ----
[[gnu::always_inline]] inline TensorSpec relu_meta(const Tensor& self) {
  STRATA_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  return unary_spec(self, self.dtype());
}
void relu_cpu(const Tensor& out, const Tensor& self) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    unary_loop<T>(out, self, [](T x) { return (x != x || x > T(0)) ? x : T(0); });
  });
}

// ---- threshold_backward: grad where self > threshold, else 0 ----
// PyTorch's TensorIterator takes self before grad_output (its meta adds them in that order), so a
// shape mismatch names self's size first ("tensor a") and the output follows self's layout first.
[[gnu::always_inline]] inline TensorSpec threshold_backward_meta(const Tensor& grad_output, const Tensor& self, Scalar threshold) {
  (void)threshold;
  return binary_spec(self, grad_output, result_type(self, grad_output));
}
void threshold_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& self, Scalar threshold) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T th = threshold.to<T>();
    promoting_binary_loop<T>(out, grad_output, self, [th](T g, T x) { return x <= th ? T(0) : g; });
  });
}

}  // namespace

// In-place ops write the promoted result into self: it must fit self's dtype and shape.
void check_inplace(const Tensor& self, const Tensor& other) {
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, other);
  const ScalarType common = result_type(self, other);
  STRATA_CHECK(can_cast(common, self.dtype()), "result type ", common, " can't be cast to the desired output type ",
               self.dtype());
  if (self.sizes() == other.sizes()) return;  // the common case: nothing to broadcast
  const DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  STRATA_CHECK(IntArrayRef(shape).size() == self.sizes().size() &&
                   std::equal(shape.begin(), shape.end(), self.sizes().begin()),
               "output with shape ", shape_str(self.sizes()), " doesn't match the broadcast shape ", shape_str(shape));
}

// register_pointwise_ops(): the rows of pointwise_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/pointwise_ops_rows.inc"

}  // namespace strata::ops
