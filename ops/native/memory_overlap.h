// ops/native/memory_overlap.h: the checks an in-place op makes before writing: the written-to tensor may
// not have two elements in one memory location, and an input may not partly overlap it (PyTorch's
// assert_no_internal_overlap / assert_no_partial_overlap, made by every TensorIterator output).
#pragma once

#include "../../core/tensor.h"

namespace strata::ops {

// Throws PyTorch's "unsupported operation: more than one element of the written-to tensor ..."
// when `self` is known to repeat a location (a dimension of stride 0 and size > 1).
void assert_no_internal_overlap(const Tensor& self);
// Throws PyTorch's "unsupported operation: some elements of the input tensor and the written-to
// tensor ..." when `input` and `self` share some memory but are not the same elements in the same
// order. Like PyTorch, gives up silently (no error) where the answer is hard: a non-dense tensor.
void assert_no_partial_overlap(const Tensor& self, const Tensor& input);

}  // namespace strata::ops
