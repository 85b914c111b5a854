// tracer/autograd_dot.h: the autograd graph behind a tensor as Graphviz DOT, drawn as torchviz's
// make_dot(var, params, show_saved=True) draws it: a box per node named as PyTorch names it
// (AddmmBackward0, AccumulateGrad), edges from each node's inputs toward the output, the output in
// green, leaves in light blue with their sizes (and names from `params`), saved tensors in orange.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../core/tensor.h"

namespace strata::tracer {

// `params` names leaves as make_dot's params= does (model.named_parameters()). A tensor without a
// history gives a graph of that tensor alone. Node ids are assigned in visiting order, so the text is
// the same for the same graph.
std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& params = {});

}  // namespace strata::tracer
