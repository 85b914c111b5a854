// autograd/backward.cpp: checking and making root gradients (torch/autograd/__init__.py, _make_grads).
#include "autograd/backward.h"

#include "autograd/accumulate_grad.h"
#include "autograd/engine.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "autograd/registration.h"
#include "ops/functions.h"
#include "ops/torch_function.h"

namespace strata {

namespace {
std::string torch_size(IntArrayRef sizes) { return "torch.Size(" + shape_str(sizes) + ")"; }
}  // namespace

// Boxes Tensor.backward's `inputs` (a list of tensors) for a function mode; found by argument-dependent
// lookup from STRATA_TORCH_FUNCTION's boxing of the optional.
inline void box_argument(std::vector<IValue>& out, const std::vector<Tensor>& v) { out.emplace_back(v); }

namespace autograd {
// PyTorch's _make_grads (torch/csrc/autograd/autograd.cpp, with torch/autograd/__init__.py's shape check).
variable_list make_grads(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors) {
  STRATA_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "got ", tensors.size(), " tensors and ",
               grad_tensors.size(), " gradients");
  autograd::variable_list grads;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& out = tensors[i];
    STRATA_CHECK(out.defined(), "backward: element ", i, " of tensors is an undefined Tensor (expected a defined output)");
    const Tensor grad = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (grad.defined()) {
      STRATA_CHECK(out.sizes() == grad.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                   torch_size(grad.sizes()), " and output[", i, "] has a shape of ", torch_size(out.sizes()), ".");
      grads.push_back(grad);
    } else if (out.requires_grad()) {
      STRATA_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      grads.push_back(ones_like_python(out, MemoryFormat::Preserve));
    } else {
      grads.emplace_back();
    }
  }
  return grads;
}

edge_list input_edges(std::span<const Tensor> inputs, bool accumulate_grad) {
  edge_list edges;
  for (const Tensor& input : inputs) {
    STRATA_CHECK(input.defined(), "One of the differentiated Tensors is undefined");
    if (accumulate_grad) retain_grad(input);  // PyTorch's order: its error comes before the one below
    STRATA_CHECK(input.requires_grad(), "One of the differentiated Tensors does not require grad");
    if (input.grad_fn()) {
      edges.push_back(gradient_edge(input));
    } else {
      // A leaf whose AccumulateGrad no graph holds cannot be reached (PyTorch's Identity edge for it):
      // its edge stays invalid.
      edges.push_back(Edge{try_get_grad_accumulator(*input.impl()->autograd_meta()), 0});
    }
  }
  return edges;
}
}  // namespace autograd

void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, std::span<const Tensor> inputs) {
  autograd::register_autograd();
  autograd::variable_list grads = autograd::make_grads(tensors, grad_tensors);
  const autograd::edge_list outputs = autograd::input_edges(inputs, /*accumulate_grad=*/true);
  autograd::run_backward(tensors, std::move(grads), retain_graph.value_or(create_graph), create_graph, outputs);
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const std::vector<Tensor>& inputs) {
  backward(std::span<const Tensor>(tensors), std::span<const Tensor>(grad_tensors), retain_graph, create_graph,
           std::span<const Tensor>(inputs));
}

void backward(const Tensor& tensor, const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
              const std::optional<std::vector<Tensor>>& inputs) {
  STRATA_TORCH_FUNCTION(backward, "torch.Tensor.backward", "self, *, gradient, retain_graph, create_graph, inputs", tensor,
                        gradient, retain_graph, create_graph, inputs);
  STRATA_CHECK(!inputs || !inputs->empty(), "'inputs' argument to backward cannot be empty");
  backward(std::span<const Tensor>(&tensor, 1), std::span<const Tensor>(&gradient, gradient.defined() ? 1 : 0),
           retain_graph, create_graph, inputs ? std::span<const Tensor>(*inputs) : std::span<const Tensor>());
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const std::optional<std::vector<Tensor>>& inputs) const {
  strata::backward(*this, gradient, retain_graph, create_graph, inputs);
}

}  // namespace strata
