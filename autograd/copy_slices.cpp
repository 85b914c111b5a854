// autograd/copy_slices.cpp: CopySlices' edges and backward (PyTorch's CopySlices::apply_impl, with its
// ops in its order, so a dispatch mode sees PyTorch's sequence).
#include "autograd/copy_slices.h"

#include "autograd/engine.h"
#include "autograd/saved_variable.h"
#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "ops/functions.h"

namespace strata::autograd {

CopySlices::CopySlices(const Tensor& base, const Tensor& view, NodePtr fn)
    : Node(next_sequence_nr()), base_(base), view_(view), fn_(std::move(fn)) {
  add_input_metadata(base);
  assign_gradient_edge(add_next_edge(), base);
  for (std::size_t i = 1; i < fn_->num_outputs(); ++i) add_next_edge() = fn_->next_edge(i);
}

// fn_ is not an edge, so it would die outside Node's bounded teardown (Note [Deep graphs are torn
// down without recursion]); as the last edge it dies inside it, like the rest of the graph below.
CopySlices::~CopySlices() {
  if (fn_) add_next_edge().function = std::move(fn_);
}

variable_list CopySlices::apply(std::span<Tensor> grads) {
  variable_list grad_inputs;
  for (std::size_t i = 0; i < num_outputs(); ++i) grad_inputs.emplace_back();
  const Tensor& grad = grads[0];
  if (!grad.defined()) return grad_inputs;
  STRATA_CHECK(fn_, kBackwardTwiceMessage);

  // The base's gradient, in the base's layout; the view's part of it is overwritten below.
  Tensor result = new_empty_strided(grad, base_.sizes, base_.strides);
  copy_(result, grad);
  // With create_graph (grad mode on) the slice is a differentiable view of `result`, so the copy_ into
  // it below gives `result` its history (Note [Every view of a float tensor is tracked]).
  const Tensor grad_slice = as_strided(result, view_.sizes, view_.strides, view_.storage_offset - base_.storage_offset);
  // A copy: fn may save the gradient it is given, and grad_slice is written below.
  Tensor fn_grad = clone(grad_slice, MemoryFormat::Contiguous);
  // fn's edge 0 (the view's old history) stands for this node's edge 0 (PyTorch's update_exec_info):
  // a pass that runs part of its graph must count it as needed when this node's is.
  if (fn_->should_compute_output(0) && task_should_compute_output(0))
    add_node_to_current_graph_task_exec_info(fn_->next_edge(0).function.get());
  variable_list res = fn_->apply(std::span<Tensor>(&fn_grad, 1));

  for (std::size_t i = 0; i < res.size(); ++i) {
    if (!task_should_compute_output(i) || !res[i].defined()) continue;  // an undefined gradient counts as zeros
    if (i == 0) {
      copy_(grad_slice, res[0]);
      grad_inputs[0] = std::move(result);
    } else {
      grad_inputs[i] = std::move(res[i]);
    }
  }
  return grad_inputs;
}

}  // namespace strata::autograd
