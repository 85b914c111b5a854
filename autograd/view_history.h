// autograd/view_history.h: autograd of in-place ops on views, as PyTorch's DifferentiableViewMeta,
// check_inplace and rebase_history do it (torch/csrc/autograd/variable.cpp, VariableTypeUtils.h).
// The state itself is core's ViewInfo (Note [A view's autograd state lives in its meta]); the node an
// in-place op on a view makes the base's history is CopySlices (autograd/copy_slices.h).
#pragma once

#include "node.h"
#include "../core/autograd_meta.h"

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
// Every view of a float tensor made in grad mode has this state, whether or not its source requires
// grad (the view kernels give it, Note [Every view of a float tensor is tracked], core/autograd_meta.h),
// so an in-place op through a view of a plain tensor with an input that requires grad gives the
// base a CopySlices history too. A view made with grad mode off has no base, only a flag: an in-place
// op through it that autograd would record is refused in PyTorch's words (check_inplace). A view
// without history whose base has none either keeps none.

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

// Makes `view` a differentiable view of `base` (base_of the view op's input), at the current version,
// unless the view kernel already did: a recorded view op's output, whose history is already set
// (a mode's or wrapper subclass's output is not the kernel's).
void make_differentiable_view(const Tensor& view, Tensor&& base);

// PyTorch's check_inplace, for an in-place op recorded with grad mode on and an input that requires
// grad: a view made in no_grad mode, a leaf that requires grad, or a view of one, may not be written
// in place.
void check_inplace(const Tensor& self);

// Makes `e` (the in-place op's node) the history of `self`, which that op wrote. For a differentiable
// view the base's history becomes a CopySlices node over `e` and the view's grad_fn is regenerated;
// otherwise this is set_gradient_edge.
void rebase_history(const Tensor& self, Edge e);

// Tensor::grad_fn() of a differentiable view: its grad_fn, regenerated first if stale.
Node* view_grad_fn(const Tensor& view);

}  // namespace strata::autograd
