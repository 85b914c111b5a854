// autograd/engine.h: runs a backward pass in PyTorch's order. Nodes become ready when every
// gradient they expect has arrived; the ready queue runs AccumulateGrad nodes first and the others
// by decreasing sequence number (torch/csrc/autograd/engine.cpp, ReadyQueue::CompareNodeTaskTime).
// Before a gradient moves along an edge it is checked against the receiving node's input metadata:
// reduced with sum_to if it was broadcast, cast if its dtype differs (validate_outputs).
#pragma once

#include <span>
#include <vector>

#include "node.h"

namespace strata::autograd {

// Backpropagates `grads` (one per root, already shaped like the root; moved from) from `roots`.
// keep_graph=false frees saved tensors as nodes run; create_graph=true records the backward ops.
// With no `outputs` (backward()) every reachable node runs and leaves accumulate into .grad; with
// some, only the nodes that lead to them run (Note [autograd::grad runs only what leads to its
// inputs]): with accumulate_grad (backward(inputs=...)) the outputs' nodes run, so only those leaves
// accumulate; without (autograd::grad) the gradient arriving at each output edge is returned in its
// place (undefined if none arrives).
variable_list run_backward(std::span<const Tensor> roots, variable_list&& grads, bool keep_graph, bool create_graph,
                           std::span<const Edge> outputs = {}, bool accumulate_grad = true);

// PyTorch's add_node_to_current_graph_task_exec_info: in a pass that runs part of its graph, `node`
// (outside it) counts as needed. CopySlices uses it for its inner node's edge 0.
void add_node_to_current_graph_task_exec_info(const Node* node);

}  // namespace strata::autograd
