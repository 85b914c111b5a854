// ops/native/type_promotion.h: PyTorch's result_type for two tensors and its can_cast rule, for the four
// dtypes strata has. Three tiers, each consulted only for a higher category (bool < integer <
// floating): dimensioned tensors, then zero-dim tensors, then wrapped numbers. So float32 [8] +
// float64 0-d stays float32, int64 [8] + float32 0-d is float32, and a wrapped 2.5 (a C++ double)
// counts as the default float dtype, float32, so float32 0-d * 2.5 stays float32.
#pragma once

#include "../../core/tensor.h"

namespace strata::ops {

// Tensors of one dtype promote to it unless both are wrapped numbers (two wrapped float64s give the
// default float32): that case is answered inline, the three tiers out of line.
ScalarType result_type_of_mixed(const Tensor& a, const Tensor& b);
inline ScalarType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype() && !(a.impl()->is_wrapped_number() && b.impl()->is_wrapped_number())) [[likely]]
    return a.dtype();
  return result_type_of_mixed(a, b);
}
// The same with a C++ number as b (a wrapped number), without making a tensor.
ScalarType result_type(const Tensor& a, const Scalar& b);
// The dtype a float op computes in for inputs of promoted dtype `t` (PyTorch's
// promote_inputs_to_default_float_dtype, the rule of exp, div and the other unary float ops):
// floating types stay, integers and bools compute in the default float dtype, float32.
constexpr ScalarType to_float_dtype(ScalarType t) { return is_floating_point(t) ? t : ScalarType::Float32; }
// A C++ number as a wrapped-number 0-d tensor (PyTorch's wrapped_scalar_tensor): float64 for
// floating values, int64 for integers, bool for booleans.
Tensor wrapped_scalar_tensor(const Scalar& value);
// Whether a value of type `from` may be written into a tensor of type `to` (PyTorch's canCast).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace strata::ops
