// autograd/cat_backward.h: the Autograd kernel of aten::cat, which records CatBackward0 with one
// edge per tensor of its list (registered by register_autograd, autograd/registration.cpp).
#pragma once

#include "../core/dispatcher.h"

namespace strata::autograd {

void cat_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

}  // namespace strata::autograd
