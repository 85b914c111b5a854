// autograd/hooks.h: tensor hooks (register_hook, retain_grad, register_post_accumulate_grad_hook),
// node pre- and post-hooks (Node::register_prehook, Node::register_hook), and the calls the engine
// makes to run them, in PyTorch's order (torch/csrc/autograd/engine.cpp: call_tensor_pre_hooks,
// call_pre_hooks, call_post_hooks; Note [The order hooks run in]).
#pragma once

#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "node.h"
#include "../core/tensor_hooks.h"

namespace strata {

// t.register_hook(hook): `hook` gets the gradient of `t` and may return a replacement (or an undefined
// Tensor for none). On a leaf it runs before the gradient is accumulated into .grad, on a non-leaf
// before its grad_fn consumes the gradient. `t` must require grad.
RemovableHandle register_hook(const Tensor& t, GradHook hook);
// t.retain_grad(): a non-leaf keeps its gradient in .grad (a no-op on a leaf). `t` must require grad.
void retain_grad(const Tensor& t);
// t.retains_grad: whether retain_grad() was called on this non-leaf.
bool retains_grad(const Tensor& t);
// t.register_post_accumulate_grad_hook(hook): `hook` gets the leaf after its .grad was accumulated.
RemovableHandle register_post_accumulate_grad_hook(const Tensor& t, PostAccumulateGradHook hook);

namespace detail {
// Whether a hook's return value stands for Python's None: an undefined Tensor, an empty optional.
inline bool returned_none(const Tensor& t) { return !t.defined(); }
template <typename T>
bool returned_none(const std::optional<T>& v) {
  return !v.has_value();
}
template <typename T>
bool returned_none(const T&) {
  return false;
}
[[noreturn]] void throw_post_accumulate_grad_hook_returned();
}  // namespace detail

// A post-accumulate-grad hook that returns something: as PyTorch's, it may only return None (an
// undefined Tensor, an empty optional); anything else fails the backward in PyTorch's words when
// the hook runs, rather than being dropped unseen.
template <typename F>
  requires(!std::is_void_v<std::invoke_result_t<F&, const Tensor&>>)
RemovableHandle register_post_accumulate_grad_hook(const Tensor& t, F hook) {
  return register_post_accumulate_grad_hook(t, PostAccumulateGradHook([hook = std::move(hook)](const Tensor& leaf) mutable {
    if (!detail::returned_none(hook(leaf))) detail::throw_post_accumulate_grad_hook_returned();
  }));
}

}  // namespace strata

namespace strata::autograd {

struct NodeHooks {
  // The gradient hooks of the tensors this node made, one list per output, in the order the first hook
  // of each was registered (PyTorch's tensor_pre_hooks_).
  struct TensorPreHooks {
    std::uint32_t input_nr;  // the node's input: the tensor's output_nr
    std::shared_ptr<HookList<GradHook>> list;
  };
  std::vector<TensorPreHooks> tensor_pre;
  // retain_grad() of the tensors this node made, by input (PyTorch's retains_grad_hooks_).
  struct RetainsGrad {
    std::uint32_t input_nr;
    std::shared_ptr<RetainedGradSlot> slot;
  };
  std::vector<RetainsGrad> retains_grad;
  std::shared_ptr<HookList<NodePreHook>> pre;
  std::shared_ptr<HookList<NodePostHook>> post;
};

inline bool has_post_hooks(const NodeHooks& hooks) { return hooks.post && !hooks.post->empty(); }

// Whether the engine must take the hooks path for `node`: hooks on the node, or, for an AccumulateGrad,
// gradient hooks on its leaf.
bool has_hooks(const Node& node);
// The tensor pre-hooks of `node`'s inputs (a leaf's gradient hooks for an AccumulateGrad), then its
// retain_grad() hooks, each replacing inputs[i] when it returns a tensor.
void call_tensor_pre_hooks(Node& node, std::span<Tensor> inputs);
// The node's pre-hooks, each of which may replace all of `inputs`.
void call_pre_hooks(Node& node, std::span<Tensor> inputs);
// The node's post-hooks, each of which may replace all of `outputs`; `inputs` are what the node read.
void call_post_hooks(Node& node, variable_list& outputs, std::span<const Tensor> inputs);
// A leaf's post-accumulate-grad hooks (AccumulateGrad::apply calls them).
void call_post_accumulate_grad_hooks(const Tensor& leaf, TensorHooks& hooks);
// An in-place op gave a tensor that retains its grad a new history: its retain_grad() hook moves from
// its old grad_fn to the new one (PyTorch's update_tensor_hooks_on_new_gradfn).
void move_retains_grad(AutogradMeta& meta, Node* new_fn, std::uint32_t new_output_nr);

}  // namespace strata::autograd
