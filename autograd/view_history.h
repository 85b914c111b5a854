// autograd/view_history.h: autograd of in-place ops on views, as PyTorch's DifferentiableViewMeta,
// check_inplace and rebase_history do it (torch/csrc/autograd/variable.cpp, VariableTypeUtils.h).
// The state itself is core's ViewInfo (Note [A view's autograd state lives in its meta]); the node an
// in-place op on a view makes the base's history is CopySlices (autograd/copy_slices.h).
#pragma once

#include "autograd/node.h"
#include "core/autograd_meta.h"

namespace strata::autograd {

// Note [Views share their base's history]
// A view and its base share memory, so an in-place op on either changes both, and autograd must see
// that, as PyTorch's does:
// - A recorded view op's output gets the root base (the base of a view of a view is the first base)
//   and the storage version its grad_fn was set at (make_differentiable_view).
// - An in-place op on a view gives the *base* a new history: a CopySlices node, which runs the op's
//   node on the view's part of the base's gradient and passes the rest through (rebase_history).
// - A view whose recorded version is no longer the storage's (its base or a sibling view was written
//   since) gets a fresh grad_fn when next asked for one: AsStridedBackward0 over the base's current
//   history, with the view's sizes, strides and offset (PyTorch's VariableHooks::grad_fn). Asking is
//   Tensor::grad_fn() or taking the view's gradient edge (a recorded op's input, a backward root).
// Only tensors autograd records have this state: a view of a tensor that did not require grad when
// the view was taken is a plain tensor (strata puts the Autograd key only on tensors that require
// grad, Note [Dispatch keys]), so an in-place op through it does not reach its base's history. The
// one place strata itself writes into such a view, CopySlices' backward under create_graph, gives
// the view this state by hand. A view without history whose base has none either keeps none.

// The view state of `t`, or null when it is not a differentiable view.
inline const ViewInfo* view_info(const Tensor& t) {
  const AutogradMeta* meta = t.impl()->autograd_meta();
  return meta && meta->is_view() ? &meta->view : nullptr;
}

// The base a view of `self` has: self's base if self is a differentiable view, else self.
inline Tensor base_of(const Tensor& self) {
  const ViewInfo* info = view_info(self);
  return info ? info->base : self;
}

// Makes `view` a differentiable view of `base` (base_of the view op's input), at the current version:
// a recorded view op's output, whose history is already set, or a view with no history that an
// in-place op must see through (CopySlices' slice of the base's gradient under create_graph).
void make_differentiable_view(const Tensor& view, Tensor&& base);

// PyTorch's check_inplace, for an in-place op recorded with grad mode on and an input that requires
// grad: a leaf that requires grad, or a view of one, may not be written in place.
void check_inplace(const Tensor& self);

// Makes `e` (the in-place op's node) the history of `self`, which that op wrote. For a differentiable
// view the base's history becomes a CopySlices node over `e` and the view's grad_fn is regenerated;
// otherwise this is set_gradient_edge.
void rebase_history(const Tensor& self, Edge e);

// Tensor::grad_fn() of a differentiable view: its grad_fn, regenerated first if stale.
Node* view_grad_fn(const Tensor& view);

}  // namespace strata::autograd
