// ops/type_promotion.h: PyTorch's result_type for two tensors and its can_cast rule, for the four
// dtypes strata has. Three tiers, each consulted only for a higher category (bool < integer <
// floating): dimensioned tensors, then zero-dim tensors, then wrapped numbers. So float32 [8] +
// float64 0-d stays float32, int64 [8] + float32 0-d is float32, and a wrapped 2.5 (a C++ double)
// counts as the default float dtype, float32, so float32 0-d * 2.5 stays float32.
#pragma once

#include "core/tensor.h"

namespace strata::ops {

ScalarType result_type(const Tensor& a, const Tensor& b);
// The same with a C++ number as b (a wrapped number), without making a tensor.
ScalarType result_type(const Tensor& a, const Scalar& b);
// A C++ number as a wrapped-number 0-d tensor (PyTorch's wrapped_scalar_tensor): float64 for
// floating values, int64 for integers, bool for booleans.
Tensor wrapped_scalar_tensor(const Scalar& value);
// Whether a value of type `from` may be written into a tensor of type `to` (PyTorch's canCast).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace strata::ops
