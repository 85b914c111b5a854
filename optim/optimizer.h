// optim/optimizer.h: torch.optim.Optimizer. step() runs the update under no_grad inside a
// record-function scope named "Optimizer.step#<Class>.step", as PyTorch 2.x does, so dispatch modes
// see profiler::_record_function_enter_new before the updates and _record_function_exit after.
#pragma once

#include <string>
#include <vector>

#include "../core/dispatch/ivalue.h"
#include "../core/tensor.h"

namespace strata::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;

  void step();
  void zero_grad(bool set_to_none = true);
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  virtual std::string class_name() const = 0;  // "SGD"
  virtual void update() = 0;                    // the algorithm, for params with a gradient

 private:
  std::vector<Tensor> params_;
  IValue profile_name_;  // "Optimizer.step#SGD.step", boxed once
};

}  // namespace strata::optim
