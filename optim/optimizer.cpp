// optim/optimizer.cpp: the step wrapper (Optimizer.profile_hook_step + _use_grad_for_differentiable).
#include "optim/optimizer.h"

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "nn/module.h"
#include "ops/functions.h"
#include "ops/record_function.h"

namespace strata::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  STRATA_CHECK(!params_.empty(), "optimizer got an empty parameter list");
  for (const Tensor& p : params_) {
    STRATA_CHECK(p.defined(), "optimizer got an undefined parameter");
    STRATA_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor");  // torch.optim's add_param_group
  }
}

void Optimizer::step() {
  if (profile_name_.is_none()) profile_name_ = IValue(std::string_view("Optimizer.step#" + class_name() + ".step"));
  ops::RecordFunctionScope scope(profile_name_);
  {
    autograd::NoGradGuard no_grad;
    update();
  }
  scope.exit();
}

void Optimizer::zero_grad(bool set_to_none) {
  for (const Tensor& p : params_) nn::zero_grad_(p, set_to_none);
}

}  // namespace strata::optim
