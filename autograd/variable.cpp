// autograd/variable.cpp: requires_grad_, set_grad and set_requires_grad (gradient edges are inline, in the header).
#include "autograd/variable.h"

#include "autograd/accumulate_grad.h"
#include "autograd/registration.h"
#include "core/autograd_meta.h"

namespace strata {

const Tensor& requires_grad_(const Tensor& self, bool requires_grad) {
  autograd::register_autograd();
  STRATA_CHECK(self.defined(), "requires_grad_() on an undefined tensor");
  if (requires_grad) {
    STRATA_CHECK(is_floating_point(self.dtype()),
                 "only Tensors of floating point and complex dtype can require gradients (got ", self.dtype(), ")");
  } else {
    STRATA_CHECK(self.is_leaf(),
                 "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                 "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  autograd::set_requires_grad(self, requires_grad);
  return self;
}

void set_grad(const Tensor& self, const Tensor& grad) {
  STRATA_CHECK(!grad.is_same(self), "can't assign Variable as its own grad");
  STRATA_CHECK(!grad.defined() || grad.device() == self.device(), "assigned grad has data located on a different device");
  STRATA_CHECK(!grad.defined() || std::equal(grad.sizes().begin(), grad.sizes().end(), self.sizes().begin(),
                                             self.sizes().end()),
               "assigned grad has data of a different size: got ", shape_str(grad.sizes()), ", expected ",
               shape_str(self.sizes()));
  STRATA_CHECK(!grad.defined() || grad.dtype() == self.dtype(), "assigned grad has data of a different type: got ",
               grad.dtype(), ", expected ", self.dtype());
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
