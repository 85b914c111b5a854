// core/autograd_meta.h: the autograd state a tensor carries once it requires grad or has a history.
// The struct lives in core so a Tensor can answer requires_grad()/grad()/is_leaf(); Node and everything
// that reads or writes graphs live in autograd/. Plain tensors have none (no allocation).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include "autograd_hooks.h"
#include "dispatch/local_dispatch_keys.h"
#include "util/small_mutex.h"
#include "util/small_object_pool.h"
#include "tensor.h"
#include "tensor_hooks.h"

namespace strata {

namespace autograd {
class Node;
}

// Note [Core releases a grad_fn through autograd]
// A tensor owns one reference to its grad_fn. Nodes count their references in place (Note [Nodes
// count their references in place], autograd/node.h), so giving one up needs Node's definition, which
// core cannot see. AutogradMeta therefore keeps the node as a raw pointer that holds a reference:
// autograd takes and gives up those references when it sets a history (autograd::set_gradient_edge),
// and when the tensor dies core gives its reference up through `release_node`, which autograd installs
// when it registers (before any node can exist), through AutogradHooks (Note [Core reaches autograd
// through one interface]).

// Note [A view's autograd state lives in its meta]
// The output of a differentiable view op (t, view, expand, as_strided, unsqueeze...: a schema whose
// return aliases its input without writing it) made in grad mode is a differentiable view, as
// PyTorch's DifferentiableViewMeta: it knows its root base (a view of a view points at the first
// base) and the version of the shared storage when its grad_fn was last set, so that an in-place op
// on the view can rebase the base's history (CopySlices) and an in-place op on the base or another
// view can regenerate the view's grad_fn (AsStridedBackward0). See autograd/view_history.h.
// The two fields sit inline in the meta (an undefined base for a non-view) rather than behind a
// pointer to a pooled block of their own: the MLP step records a view per layer (weight.t()), and a
// second block per view would be one more allocation, free and indirection each.
struct ViewInfo {
  Tensor base;                // the root base, never itself a view; undefined when this is no view
  std::uint32_t version = 0;  // the storage's version when the view's grad_fn was last set
  // One of several views an op returned at once (split's pieces): no in-place op may write it, as
  // PyTorch's CreationMeta::MULTI_OUTPUT_NODE (Note [The outputs of a multi-output view], ops/split_ops.cpp).
  bool multi_output = false;
};

struct AutogradMeta {
  AutogradMeta() = default;
  AutogradMeta(const AutogradMeta&) = delete;
  AutogradMeta& operator=(const AutogradMeta&) = delete;
  ~AutogradMeta() {
    if (grad_fn) autograd_hooks()->release_node(grad_fn);
  }

  bool requires_grad = false;                 // set on leaves by requires_grad_()
  // PyTorch's AutogradMeta::mutex_: a leaf's lock, guarding `grad_accumulator` (Note [A leaf finds its
  // accumulator through a weak pointer]). Accumulation holds the accumulator's own lock instead (Note
  // [Gradients accumulate under the accumulator's lock]). One byte, in padding the struct has anyway
  // (Note [A leaf's mutex is one byte], core/util/small_mutex.h).
  SmallMutex mutex;
  std::uint32_t output_nr = 0;                // which output of grad_fn this tensor is
  Tensor grad;                                // .grad, accumulated by AccumulateGrad
  autograd::Node* grad_fn = nullptr;          // the node that made this tensor (null on leaves); holds a reference
  // A leaf's AccumulateGrad while some graph holds it, else null. Not a reference (the node holds the
  // leaf), and guarded by `mutex`: PyTorch's weak grad_accumulator_ (Note [A leaf finds its
  // accumulator through a weak pointer], autograd/accumulate_grad.cpp).
  autograd::Node* grad_accumulator = nullptr;
  // Hooks registered on this tensor, null when none (core/tensor_hooks.h).
  std::unique_ptr<TensorHooks> hooks;
  // A differentiable view's base and version (Note [A view's autograd state lives in its meta]).
  ViewInfo view;
  bool is_view() const { return view.base.defined(); }
};

// Note [Every view of a float tensor is tracked]
// PyTorch makes every view of a floating tensor a differentiable view (ADInplaceOrView's as_view),
// whether or not anything requires grad, so that a later in-place op through the view can still give
// its base a history, and remembers when grad mode was off as the view was made (CreationMeta
// NO_GRAD_MODE), to refuse an in-place op through it that autograd would record. The view kernels
// (ops/boxing.h, def_view) do the same through track_view:
// - in grad mode the view gets the meta above with its root base and the storage's version, whether
//   or not the source requires grad. An in-place op through it with an input that requires grad then
//   gives the base a CopySlices history (autograd/view_history.h).
// - with grad mode off (no_grad, and every backward without create_graph) it only gets a flag in
//   its TensorImpl, and so does a view of such a view: such a view can only ever be refused, never
//   rebased, so it needs no base. An inference forward pays a thread-local read and a store per view.
// Views of other dtypes are not tracked: they cannot carry gradients.
//
// Note [A no_grad view of a tensor that requires grad]
// PyTorch's view made under no_grad of a tensor that requires grad still requires grad (through its
// base), so an in-place op through it with grad mode back on is refused (check_inplace), whatever
// the op's other arguments: `a = x * 1; with no_grad: v = a.view(6)`, then `v.mul_(2)`. Such a view
// here keeps the Autograd key, with no meta: the op reaches the autograd handler, which refuses it
// in PyTorch's words, and an out-of-place op on it records a node whose edge for it is invalid, as
// PyTorch's, whose view has no grad_fn and gives its gradient to no one. The key outlives any meta
// the view gets later (refresh_autograd_key). A view of such a view is one too.
namespace detail {
void track_view_in_grad_mode(const TensorImpl& source, TensorImpl& view);  // tensor_impl.cpp
}
inline void track_view(const Tensor& source, const Tensor& view) {
  const TensorImpl& from = *source.impl();
  TensorImpl& out = *view.impl();
  if (!is_floating_point(from.dtype())) return;
  if (local_dispatch_keys().transparent.has(DispatchKey::Autograd) || from.is_no_grad_view()) out.set_no_grad_view_of(from);
  else detail::track_view_in_grad_mode(from, out);
}

// A fresh tensor has room for its meta in its block (Note [One allocation per fresh tensor]); a view
// takes it from the small-object pool, not malloc.
static_assert(std::is_nothrow_default_constructible_v<AutogradMeta>);
inline AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_meta_)
    autograd_meta_ = new (meta_room_ ? meta_room_ : pool::allocate(sizeof(AutogradMeta))) AutogradMeta();
  return *autograd_meta_;
}

inline void TensorImpl::refresh_autograd_key() {
  const bool needs =
      (autograd_meta_ && (autograd_meta_->requires_grad || autograd_meta_->grad_fn)) || no_grad_view_requires_grad_;
  key_set_ = needs ? key_set_.add(DispatchKey::Autograd) : key_set_.remove(DispatchKey::Autograd);
}

}  // namespace strata
