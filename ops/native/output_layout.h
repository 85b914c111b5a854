// ops/native/output_layout.h: the strides a pointwise op's fresh output gets. PyTorch's TensorIterator
// does not always allocate row-major outputs: it orders the output's dimensions the way its
// inputs are laid out in memory, so relu(x.t()) is itself a transposed-layout tensor. That is
// observable (strides, and whether AccumulateGrad can steal a gradient or must clone it), so strata
// follows the same rule. See Note [Outputs follow their inputs' layout].
#pragma once

#include <initializer_list>

#include "../../core/tensor.h"

namespace strata::ops {

// Strides for a dense tensor of `shape` whose dimension order follows `operands` (each broadcast to
// `shape`; earlier operands decide first), or empty when that order is plain row-major.
// All-contiguous inputs (the common case) are answered inline.
DimVector permuted_output_strides(IntArrayRef shape, std::initializer_list<const Tensor*> operands);
inline DimVector output_strides(IntArrayRef shape, std::initializer_list<const Tensor*> operands) {
  bool all_contiguous = true;
  for (const Tensor* t : operands) all_contiguous = all_contiguous && t->is_contiguous();
  if (all_contiguous || shape.size() <= 1) [[likely]] return {};
  return permuted_output_strides(shape, operands);
}

}  // namespace strata::ops
