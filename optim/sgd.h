// optim/sgd.h: torch.optim.SGD with PyTorch's single-tensor algorithm (CPU does not use foreach):
//   g = grad (or -grad if maximize); g += weight_decay * p;
//   momentum: buf = clone(g).detach() first, then buf = momentum * buf + (1 - dampening) * g;
//             g = g + momentum * buf if nesterov else buf;
//   p.add_(g, alpha=-lr)
#pragma once

#include <optional>
#include <vector>

#include "optimizer.h"

namespace strata::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;
};

class SGD final : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  const SGDOptions& options() const { return options_; }
  // The momentum buffer of parameter i (undefined before the first step with momentum); a parameter
  // listed twice has one buffer (Note [Momentum buffers belong to the parameter]).
  const Tensor& momentum_buffer(std::size_t i) const { return momentum_buffers_[state_index_[i]]; }

 protected:
  std::string class_name() const override { return "SGD"; }
  void update() override;

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;   // indexed by state_index_
  std::vector<std::size_t> state_index_;   // params()[i]'s state: the index of its first occurrence
  std::vector<Tensor> step_buffers_;       // update()'s list of buffers, empty between steps
};

}  // namespace strata::optim
