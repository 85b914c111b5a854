// core/autograd_hooks.h: the one interface through which core reaches autograd (PyTorch's
// VariableHooksInterface). Core holds tensors whose autograd state points at autograd::Node, a type
// it cannot see; autograd implements these few operations and installs them when it registers.
#pragma once

#include <string_view>

namespace strata {

class Tensor;
namespace autograd {
class Node;
}

// Note [Core reaches autograd through one interface]
// Core needs three things from autograd: to give up a tensor's reference to its grad_fn when the
// tensor dies (Note [Core releases a grad_fn through autograd]), a differentiable view's grad_fn
// regenerated when its base was written (Note [A view's autograd state lives in its meta]), and a
// node's name for printing. They are one interface, installed once by autograd::register_autograd()
// before any node exists, so a reader finds the whole boundary in one place. Until then
// autograd_hooks() is null: no node can exist, no view has a grad_fn, and nothing needs naming.
class AutogradHooks {
 public:
  virtual void release_node(autograd::Node* node) const noexcept = 0;
  virtual autograd::Node* view_grad_fn(const Tensor& view) const = 0;
  virtual std::string_view node_name(const autograd::Node& node) const = 0;

 protected:
  ~AutogradHooks() = default;
};

namespace detail {
inline const AutogradHooks* autograd_hooks_ = nullptr;
}

inline const AutogradHooks* autograd_hooks() { return detail::autograd_hooks_; }
// Called once, by autograd::register_autograd(); `hooks` lives for the rest of the process.
inline void set_autograd_hooks(const AutogradHooks& hooks) { detail::autograd_hooks_ = &hooks; }

}  // namespace strata
