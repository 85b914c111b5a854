// ops/type_promotion.h: PyTorch's result_type for two tensors and its can_cast rule, for the four
// dtypes strata has. Dimensioned tensors outrank zero-dim tensors within a category (bool < integer
// < floating), so float32 [8] + float64 0-d stays float32, while int64 [8] + float32 0-d is float32.
#pragma once

#include "core/tensor.h"

namespace strata::ops {

ScalarType result_type(const Tensor& a, const Tensor& b);
// Whether a value of type `from` may be written into a tensor of type `to` (PyTorch's canCast).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace strata::ops
