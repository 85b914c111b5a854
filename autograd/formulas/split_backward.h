// autograd/formulas/split_backward.h: the Autograd kernels of aten::split.Tensor and
// aten::split_with_sizes, which record SplitBackward0 and SplitWithSizesBackward0: one node whose
// inputs are all the pieces (registered by register_autograd, autograd/registration.cpp).
#pragma once

#include "../../core/dispatch/dispatcher.h"

namespace strata::autograd {

void split_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

}  // namespace strata::autograd
