// autograd/backward.h: loss.backward() and torch.autograd.backward(tensors, grads). A scalar root
// with no gradient given gets ones_like(root), dispatched, as torch.autograd's _make_grads does.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "node.h"
#include "../core/tensor.h"

namespace strata {

// retain_graph defaults to create_graph, as in PyTorch. `inputs` (LibTorch's, torch.autograd.backward's):
// accumulate only into these tensors' .grad (a non-leaf among them retains its grad, as PyTorch's
// does), and run only the part of the graph that leads to them; none given means every leaf. The
// single-tensor form takes them as Tensor::backward does: given, they may not be empty.
void backward(const Tensor& tensor, const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
              bool create_graph = false, const std::optional<std::vector<Tensor>>& inputs = std::nullopt);
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});
// The same over spans (loss.backward() uses it without building vectors).
void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors,
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              std::span<const Tensor> inputs = {});

}  // namespace strata

namespace strata::autograd {
// The root gradients of a pass (PyTorch's _make_grads): each given one checked against its output's
// shape, ones_like(output) for a scalar output without one, undefined for an output that needs none.
variable_list make_grads(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors);
// The edges the gradients of `inputs` arrive along (PyTorch's run_backward): a non-leaf's grad_fn, a
// leaf's AccumulateGrad, or an invalid edge for a leaf no graph reaches. With accumulate_grad
// (backward(inputs=...)) a non-leaf input retains its grad first.
edge_list input_edges(std::span<const Tensor> inputs, bool accumulate_grad);
}  // namespace strata::autograd
