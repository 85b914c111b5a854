// autograd/grad.cpp: autograd::grad, after torch/csrc/autograd/autograd.cpp (run_backward with
// accumulate_grad=false): root gradients, the inputs' edges to capture, the pass, the unused check.
#include "autograd/grad.h"

#include "autograd/backward.h"
#include "autograd/engine.h"
#include "autograd/registration.h"
#include "autograd/variable.h"

namespace strata::autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  register_autograd();
  STRATA_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  variable_list grads = make_grads(outputs, grad_outputs);
  const edge_list captures = input_edges(inputs, /*accumulate_grad=*/false);
  variable_list results = run_backward(outputs, std::move(grads), retain_graph.value_or(create_graph), create_graph, captures,
                                       /*accumulate_grad=*/false);
  if (!allow_unused) {
    for (const Tensor& r : results)
      STRATA_CHECK(r.defined(), "One of the differentiated Tensors appears to not have been used in the graph. Set "
                                "allow_unused=True if this is the desired behavior.");
  }
  return {results.begin(), results.end()};
}

}  // namespace strata::autograd
