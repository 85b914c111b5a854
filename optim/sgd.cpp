// optim/sgd.cpp: _single_tensor_sgd (torch/optim/sgd.py).
#include "optim/sgd.h"

#include <charconv>

#include "ops/detach.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::optim {

namespace {
// A hyper-parameter as an error prints it: the shortest text that reads back as the same double
// (Python's repr gives -0.123456789, where a stream's default precision would give -0.123457).
std::string shortest(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), value).ptr;
  return std::string(text, end);
}

// The index of the first parameter that is the same tensor as params[i], for each i.
std::vector<std::size_t> first_occurrences(const std::vector<Tensor>& params) {
  std::vector<std::size_t> index(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    index[i] = i;
    for (std::size_t j = 0; j < i; ++j)
      if (params[j].is_same(params[i])) {
        index[i] = j;
        break;
      }
  }
  return index;
}
}  // namespace

// The checks are PyTorch's comparisons, so NaN passes them as it does in Python (`lr < 0.0` is false).
SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params)),
      options_(options),
      momentum_buffers_(this->params().size()),
      state_index_(first_occurrences(this->params())) {
  STRATA_CHECK(!(options.lr < 0.0), "Invalid learning rate: ", shortest(options.lr));
  STRATA_CHECK(!(options.momentum < 0.0), "Invalid momentum value: ", shortest(options.momentum));
  STRATA_CHECK(!(options.weight_decay < 0.0), "Invalid weight_decay value: ", shortest(options.weight_decay));
  STRATA_CHECK(!(options.nesterov && (options.momentum <= 0 || options.dampening != 0)),
               "Nesterov momentum requires a momentum and zero dampening");
}

// Note [Momentum buffers belong to the parameter]
// PyTorch keeps a momentum buffer in self.state[p], keyed by the tensor. A step first reads every
// listed parameter's buffer, then updates them in list order (an existing buffer in place, a missing
// one made fresh), then stores each parameter's buffer back, the last occurrence winning. A parameter
// listed twice (PyTorch warns, and allows it) therefore shares one buffer, and on the first step
// both occurrences start a buffer of their own. `bufs` is the list of buffers read at the start.
//
// The gradient is read through a pointer: the plain step (no maximize, weight decay or momentum)
// passes the parameter's own .grad to add_ without taking a reference to it.
void SGD::update() {
  const bool momentum = options_.momentum != 0;
  std::vector<Tensor>& bufs = step_buffers_;  // kept across steps: a step allocates no vector
  if (momentum) {
    bufs.resize(params().size());
    for (std::size_t i = 0; i < params().size(); ++i) bufs[i] = momentum_buffers_[state_index_[i]];
  }
  for (std::size_t i = 0; i < params().size(); ++i) {
    const Tensor& param = params()[i];
    const Tensor& param_grad = param.grad();
    if (!param_grad.defined()) continue;
    Tensor computed;  // grad when it is not param.grad or the momentum buffer
    const Tensor* grad = &param_grad;
    if (options_.maximize) grad = &(computed = neg(*grad));
    if (options_.weight_decay != 0) grad = &(computed = add(*grad, param, options_.weight_decay));
    if (momentum) {
      Tensor& buf = bufs[i];
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
  for (std::size_t i = 0; momentum && i < params().size(); ++i)
    if (params()[i].grad().defined()) momentum_buffers_[state_index_[i]] = bufs[i];
  for (Tensor& buf : bufs) buf = Tensor();
}

}  // namespace strata::optim
