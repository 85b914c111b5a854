// autograd/variable.cpp: requires_grad_, set_grad and set_requires_grad (gradient edges are inline, in the header).
#include "autograd/variable.h"

#include "autograd/accumulate_grad.h"
#include "autograd/registration.h"
#include "core/autograd_meta.h"
#include "core/inference_mode.h"

namespace strata {

const Tensor& requires_grad_(const Tensor& self, bool requires_grad) {
  autograd::register_autograd();
  STRATA_CHECK(self.defined(), "requires_grad_() on an undefined tensor");
  if (requires_grad) {
    STRATA_CHECK(is_floating_point(self.dtype()),
                 "only Tensors of floating point and complex dtype can require gradients (got ", self.dtype(), ")");
    STRATA_CHECK(!self.is_inference() || is_inference_mode_enabled(),
                 "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  } else {
    STRATA_CHECK(self.is_leaf(),
                 "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                 "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  autograd::set_requires_grad(self, requires_grad);
  return self;
}

const Tensor& Tensor::requires_grad_(bool requires_grad) const { return strata::requires_grad_(*this, requires_grad); }

// PyTorch 2.8's checks of `.grad = grad` (THPVariable_set_grad), in its order and words; dtypes print
// in strata's style (float32 where PyTorch prints float).
void set_grad(const Tensor& self, const Tensor& grad) {
  STRATA_CHECK(self.defined(), "cannot assign a gradient to an undefined Tensor");
  STRATA_CHECK(!grad.is_same(self), "can't assign Variable as its own grad");
  if (grad.defined()) {
    STRATA_CHECK(grad.dtype() == self.dtype(), "attempting to assign a gradient with dtype '", grad.dtype(),
                 "' to a tensor with dtype '", self.dtype(), "'. Please ensure that the gradient and the tensor have the same dtype");
    STRATA_CHECK(grad.device() == self.device(), "attempting to assign a gradient with device type '", grad.device(),
                 "' to a tensor with device type '", self.device(), "'. Please ensure that the gradient and the tensor are on the same device");
    STRATA_CHECK(grad.sizes() == self.sizes(), "attempting to assign a gradient of size '", shape_str(grad.sizes()),
                 "' to a tensor of size '", shape_str(self.sizes()), "'. Please ensure that the gradient and the tensor are the same size");
  }
  self.impl()->ensure_autograd_meta().grad = grad;
}

}  // namespace strata

namespace strata::autograd {

void set_requires_grad(const Tensor& t, bool requires_grad) {
  if (!requires_grad && !t.impl()->autograd_meta()) return;
  t.impl()->ensure_autograd_meta().requires_grad = requires_grad;
  t.impl()->refresh_autograd_key();
}

}  // namespace strata::autograd
