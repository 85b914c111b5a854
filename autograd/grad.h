// autograd/grad.h: autograd::grad, LibTorch's torch::autograd::grad (torch.autograd.grad): the
// gradients of `outputs` with respect to `inputs`, returned rather than accumulated into any .grad.
#pragma once

#include <optional>
#include <vector>

#include "../core/tensor.h"

namespace strata::autograd {

// Returns one gradient per input: sum over outputs of grad_outputs[i] * d outputs[i] / d input.
// grad_outputs is empty (every output must be a scalar: ones) or one per output (undefined for a
// scalar output means ones). Only the part of the graph between the outputs and the inputs runs, and
// no .grad changes; the inputs' gradient hooks still run. An input the outputs do not depend on gets
// an undefined Tensor when allow_unused, and an error otherwise. retain_graph defaults to
// create_graph; create_graph records the backward ops, so the results can be differentiated again.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace strata::autograd
