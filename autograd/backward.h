// autograd/backward.h: loss.backward() and torch.autograd.backward(tensors, grads). A scalar root
// with no gradient given gets ones_like(root), dispatched, as torch.autograd's _make_grads does.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "node.h"
#include "../core/tensor.h"

namespace strata {

// retain_graph defaults to create_graph, as in PyTorch.
void backward(const Tensor& tensor, const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
              bool create_graph = false);
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);
// The same over spans (loss.backward() uses it without building vectors).
void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors,
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

}  // namespace strata

namespace strata::autograd {
// The root gradients of a pass (PyTorch's _make_grads): each given one checked against its output's
// shape, ones_like(output) for a scalar output without one, undefined for an output that needs none.
variable_list make_grads(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors);
}  // namespace strata::autograd
