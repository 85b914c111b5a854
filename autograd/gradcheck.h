// autograd/gradcheck.h: torch.autograd.gradcheck for strata: the Jacobian from backward (one
// backward per output element) against central finite differences, in float64.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../core/tensor.h"

namespace strata::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  // the first mismatch: input, output element, analytical vs numerical
};

// `fn` maps the inputs to one float64 output. Inputs must be float64; the ones that require grad
// are checked. Their data is perturbed in place and restored.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace strata::autograd
