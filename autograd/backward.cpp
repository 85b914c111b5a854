// autograd/backward.cpp: checking and making root gradients (torch/autograd/__init__.py, _make_grads).
#include "autograd/backward.h"

#include "autograd/engine.h"
#include "autograd/registration.h"
#include "ops/functions.h"
#include "ops/torch_function.h"

namespace strata {

namespace {
std::string torch_size(IntArrayRef sizes) { return "torch.Size(" + shape_str(sizes) + ")"; }
}  // namespace

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
}  // namespace autograd

void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors, std::optional<bool> retain_graph,
              bool create_graph) {
  autograd::register_autograd();
  autograd::run_backward(tensors, autograd::make_grads(tensors, grad_tensors), retain_graph.value_or(create_graph), create_graph);
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  backward(std::span<const Tensor>(tensors), std::span<const Tensor>(grad_tensors), retain_graph, create_graph);
}

void backward(const Tensor& tensor, const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) {
  STRATA_TORCH_FUNCTION(backward, "torch.Tensor.backward", "self, *, gradient, retain_graph, create_graph, inputs=None", tensor,
                        gradient, retain_graph, create_graph);
  backward(std::span<const Tensor>(&tensor, 1), std::span<const Tensor>(&gradient, gradient.defined() ? 1 : 0),
           retain_graph, create_graph);
}

}  // namespace strata
