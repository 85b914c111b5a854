// autograd/formulas/cat_backward.h: the Autograd kernels of aten::cat and aten::stack, which record
// CatBackward0 and StackBackward0 with one edge per tensor of their list (registered by
// register_autograd, autograd/registration.cpp).
#pragma once

#include "../../core/dispatch/dispatcher.h"

namespace strata::autograd {

void cat_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);
void stack_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

}  // namespace strata::autograd
