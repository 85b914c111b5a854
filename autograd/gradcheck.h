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
  // The analytical Jacobian from backward passes with create_graph (grad mode on inside them), which
  // run a formula's differentiable branch (PyTorch's "GradMode::is_enabled() ? ... : ..." formulas).
  bool create_graph = false;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  // the first mismatch: input, output element, analytical vs numerical
};

// `fn` maps the inputs to one float64 output. Inputs must be float64; the ones that require grad
// are checked. Their data is perturbed in place and restored.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

// torch.autograd.gradgradcheck: gradcheck of the function that computes fn's first gradient with
// create_graph, with respect to the inputs that require grad and to the incoming gradient (float64
// values drawn from a generator seeded with 0, as one more input). That second check compares the
// create_graph branch of a formula with its own derivative, so it cannot see a branch that is wrong
// but differentiable: first, the first gradient it computes is checked against finite differences
// (gradcheck with create_graph). Inputs as for gradcheck.
GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace strata::autograd
