// core/autograd_meta.h: the autograd state a tensor carries once it requires grad or has a history.
// The struct lives in core so a Tensor can answer requires_grad()/grad()/is_leaf(); Node and everything
// that reads or writes graphs live in autograd/. Plain tensors have none (no allocation).
#pragma once

#include <atomic>
#include <cstdint>
#include <new>
#include <type_traits>

#include "core/small_object_pool.h"
#include "core/tensor.h"

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
// when it registers (before any node can exist), as it installs the function that names a node.
// A leaf's dormant AccumulateGrad is freed the same way, through `delete_dormant_accumulator`
// (Note [A leaf keeps its accumulator dormant], autograd/accumulate_grad.cpp).
namespace detail {
using ReleaseNodeFn = void (*)(autograd::Node*) noexcept;
inline ReleaseNodeFn release_node = nullptr;
inline ReleaseNodeFn delete_dormant_accumulator = nullptr;
}  // namespace detail

struct AutogradMeta {
  AutogradMeta() = default;
  AutogradMeta(const AutogradMeta&) = delete;
  AutogradMeta& operator=(const AutogradMeta&) = delete;
  ~AutogradMeta() {
    if (grad_fn) detail::release_node(grad_fn);
    if (autograd::Node* acc = grad_accumulator.load(std::memory_order_acquire)) detail::delete_dormant_accumulator(acc);
  }

  bool requires_grad = false;                 // set on leaves by requires_grad_()
  std::uint32_t output_nr = 0;                // which output of grad_fn this tensor is
  Tensor grad;                                // .grad, accumulated by AccumulateGrad
  autograd::Node* grad_fn = nullptr;          // the node that made this tensor (null on leaves); holds a reference
  // A leaf's AccumulateGrad, made on first use and kept for the leaf's life. Not a reference: while
  // graphs hold the node it holds the leaf; when they let go it stays here, dormant, and this meta frees
  // it (Note [A leaf keeps its accumulator dormant], Note [A leaf's accumulator is found without a lock],
  // autograd/accumulate_grad.cpp). Atomic: lookups on several threads may race to set it first.
  std::atomic<autograd::Node*> grad_accumulator{nullptr};
};

// A fresh tensor has room for its meta in its block (Note [One allocation per fresh tensor]); a view
// takes it from the small-object pool, not malloc.
static_assert(std::is_nothrow_default_constructible_v<AutogradMeta>);
inline AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_meta_)
    autograd_meta_ = new (meta_room_ ? meta_room_ : pool::allocate(sizeof(AutogradMeta))) AutogradMeta();
  return *autograd_meta_;
}

inline void TensorImpl::refresh_autograd_key() {
  const bool needs = autograd_meta_ && (autograd_meta_->requires_grad || autograd_meta_->grad_fn);
  key_set_ = needs ? key_set_.add(DispatchKey::Autograd) : key_set_.remove(DispatchKey::Autograd);
}

}  // namespace strata
