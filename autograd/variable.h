// autograd/variable.h: autograd state on tensors. requires_grad_ marks a leaf; every other tensor
// gets its history from the autograd handler. A tensor's gradient flows along its gradient edge:
// its grad_fn, or, for a leaf, its AccumulateGrad node (made on first use and shared after).
#pragma once

#include "accumulate_grad.h"
#include "hooks.h"
#include "node.h"
#include "../core/autograd_meta.h"

namespace strata {

// x.requires_grad_(flag): only floating tensors can require gradients, and only leaves can stop.
// The first call registers autograd (Note [Registration on first use]). Returns self.
const Tensor& requires_grad_(const Tensor& self, bool requires_grad = true);

// x.grad = grad (an undefined grad clears it).
void set_grad(const Tensor& self, const Tensor& grad);

}  // namespace strata

namespace strata::autograd {

// Sets the leaf flag without the user-facing checks (for tensors autograd itself builds).
void set_requires_grad(const Tensor& t, bool requires_grad);
// A differentiable view's grad_fn is regenerated (AsStridedBackward0 over its base) when its base or a
// sibling view was written in place since it was set (Note [Views share their base's history],
// autograd/view_history.cpp). The test is inline, the regeneration out of line.
void regenerate_view_grad_fn(const Tensor& view, AutogradMeta& meta);
inline void refresh_view_grad_fn(const Tensor& view, AutogradMeta& meta) {
  if (meta.view.version != view.impl()->version()) [[unlikely]] regenerate_view_grad_fn(view, meta);
}
// Makes `e` the tensor's history: grad_fn = e.function, output_nr = e.input_nr. Inline: every recorded
// op sets one per output.
inline void set_gradient_edge(const Tensor& t, Edge e) {
  AutogradMeta& meta = t.impl()->ensure_autograd_meta();
  if (meta.hooks) [[unlikely]] move_retains_grad(meta, e.function.get(), e.input_nr);
  // The meta's reference (Note [Core releases a grad_fn through autograd]); the old one dies at the end.
  const NodePtr old = NodePtr::reclaim(std::exchange(meta.grad_fn, e.function.release()));
  meta.output_nr = e.input_nr;
  if (meta.is_view()) [[unlikely]] meta.view.version = t.impl()->version();  // the history is current again
  t.impl()->refresh_autograd_key();
}
// Points `e`, an invalid edge, at the edge a gradient for `t` flows along (its grad_fn, or a leaf's
// AccumulateGrad); leaves it invalid when `t` does not require grad. Inline: every recorded op asks it
// for each input that requires grad, filling the node's edge in place.
inline void assign_gradient_edge(Edge& e, const Tensor& t) {
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (!meta) return;
  if (meta->is_view()) [[unlikely]] refresh_view_grad_fn(t, *meta);
  if (meta->grad_fn) {
    e.function = NodePtr(meta->grad_fn);
    e.input_nr = meta->output_nr;
  } else if (meta->requires_grad) {
    e.function = grad_accumulator(t, *meta);
  }
}
// The edge a gradient for `t` flows along; invalid when `t` does not require grad.
inline Edge gradient_edge(const Tensor& t) {
  Edge e;
  assign_gradient_edge(e, t);
  return e;
}

}  // namespace strata::autograd
