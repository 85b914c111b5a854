// optim/sgd.cpp: _single_tensor_sgd (torch/optim/sgd.py).
#include "optim/sgd.h"

#include "ops/detach.h"
#include "ops/functions.h"
#include "ops/type_promotion.h"

namespace strata::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params)), options_(options), momentum_buffers_(this->params().size()) {
  STRATA_CHECK(options.lr >= 0.0, "Invalid learning rate: ", options.lr);
  STRATA_CHECK(options.momentum >= 0.0, "Invalid momentum value: ", options.momentum);
  STRATA_CHECK(options.weight_decay >= 0.0, "Invalid weight_decay value: ", options.weight_decay);
  STRATA_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0),
               "Nesterov momentum requires a momentum and zero dampening");
}

// The gradient is read through a pointer: the plain step (no maximize, weight decay or momentum)
// passes the parameter's own .grad to add_ without taking a reference to it.
void SGD::update() {
  for (std::size_t i = 0; i < params().size(); ++i) {
    const Tensor& param = params()[i];
    const Tensor& param_grad = param.grad();
    if (!param_grad.defined()) continue;
    Tensor computed;  // grad when it is not param.grad or the momentum buffer
    const Tensor* grad = &param_grad;
    if (options_.maximize) grad = &(computed = neg(*grad));
    if (options_.weight_decay != 0) grad = &(computed = add(*grad, param, options_.weight_decay));
    if (options_.momentum != 0) {
      Tensor& buf = momentum_buffers_[i];
      if (!buf.defined()) {
        buf = detach(clone(*grad));
      } else {
        mul_(buf, ops::wrapped_scalar_tensor(options_.momentum));  // Python's buf.mul_(momentum): mul_.Tensor
        add_(buf, *grad, 1 - options_.dampening);
      }
      grad = options_.nesterov ? &(computed = add(*grad, buf, options_.momentum)) : &buf;
    }
    add_(param, *grad, -options_.lr);
  }
}

}  // namespace strata::optim
