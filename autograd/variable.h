// autograd/variable.h: autograd state on tensors. requires_grad_ marks a leaf; every other tensor
// gets its history from the autograd handler. A tensor's gradient flows along its gradient edge:
// its grad_fn, or, for a leaf, its AccumulateGrad node (made on first use and shared after).
#pragma once

#include "autograd/node.h"

namespace strata {

// x.requires_grad_(flag): only floating tensors can require gradients, and only leaves can stop.
// The first call registers autograd (Note [Registration on first use]). Returns self.
const Tensor& requires_grad_(const Tensor& self, bool requires_grad = true);

// x.grad = grad (an undefined grad clears it).
void set_grad(const Tensor& self, const Tensor& grad);

}  // namespace strata

namespace strata::autograd {

// Sets the leaf flag without the user-facing checks (for tensors autograd itself builds).
void set_requires_grad(const Tensor& t, bool requires_grad);
// Makes `e` the tensor's history: grad_fn = e.function, output_nr = e.input_nr.
void set_gradient_edge(const Tensor& t, Edge e);
// The edge a gradient for `t` flows along; invalid when `t` does not require grad.
Edge gradient_edge(const Tensor& t);

}  // namespace strata::autograd
