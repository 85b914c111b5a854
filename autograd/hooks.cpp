// autograd/hooks.cpp: registering tensor and node hooks, and running them for the engine.
#include "autograd/hooks.h"

#include <algorithm>
#include <string>

#include "autograd/accumulate_grad.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "core/autograd_meta.h"
#include "ops/functions.h"

namespace strata::autograd {

// Note [The order hooks run in]
// For each node the engine runs (autograd/engine.cpp), in PyTorch's order (engine.cpp call_function):
//   1. tensor pre-hooks: the gradient hooks of the tensors the node made (for an AccumulateGrad, the
//      hooks of its leaf), each list in registration order, each hook seeing the gradient the one
//      before returned;
//   2. retain_grad() hooks, after every gradient hook, so .grad holds the gradient the hooks made;
//   3. the node's pre-hooks, which see and may replace all its incoming gradients;
//   4. the node itself (an AccumulateGrad then runs its leaf's post-accumulate-grad hooks);
//   5. the node's post-hooks, which see what the node read and may replace what it returned.
// autograd::grad's captured gradients are read before step 1 when the node runs anyway, and after
// steps 1-2 when it runs only to be captured (a leaf's AccumulateGrad), as PyTorch reads them.
// Hooks dispatch their ops like any other code, so dispatch modes see them where PyTorch's do.

namespace {

// PyTorch's check_single_result: a hook's replacement for one gradient keeps its dtype, device and size.
void check_replacement(const Tensor& value, const Tensor& result, std::uint64_t hook) {
  STRATA_CHECK(value.defined(), "can't replace a empty gradient with a non-empty value");
  STRATA_CHECK(result.dtype() == value.dtype() && result.device() == value.device(), "hook '", hook,
               "' has changed the type of value (was ", value.dtype(), " got ", result.dtype(), ")");
  STRATA_CHECK(result.sizes() == value.sizes(), "hook '", hook, "' has changed the size of value (was ",
               shape_str(value.sizes()), " got ", shape_str(result.sizes()), ")");
}

// PyTorch's check_result for a node hook that returned a list of gradients.
void check_replacements(std::span<const Tensor> values, const std::vector<Tensor>& results, std::uint64_t hook) {
  STRATA_CHECK(results.size() == values.size(), "hook '", hook, "' has returned an incorrect number of values (got ",
               results.size(), ", but expected ", values.size(), ")");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (results[i].defined()) check_replacement(values[i], results[i], hook);
}

void run_gradient_hooks(HookList<GradHook>& list, Tensor& grad) {
  list.for_each([&](const GradHook& hook, std::uint64_t id) {
    Tensor result = hook(grad);
    if (!result.defined()) return;  // no change
    check_replacement(grad, result, id);
    grad = std::move(result);
  });
}

// PyTorch's retain_grad hook: the first gradient is copied into .grad, later ones added out of place.
void retain(RetainedGradSlot& slot, const Tensor& grad) {
  if (!grad.defined()) return;
  const std::lock_guard<std::mutex> lock(slot.mutex);
  if (!slot.meta) return;  // the tensor died
  Tensor& held = slot.meta->grad;
  held = held.defined() ? add(held, grad) : clone(grad, MemoryFormat::Contiguous);
}

std::vector<Tensor> to_vector(std::span<const Tensor> values) { return {values.begin(), values.end()}; }

const TensorHooks* leaf_hooks(const Node& node) {
  if (node.sequence_nr() != kAccumulateGradSequenceNr) return nullptr;
  const AutogradMeta* meta = static_cast<const AccumulateGrad&>(node).variable().impl()->autograd_meta();
  return meta->hooks.get();
}

}  // namespace

bool has_hooks(const Node& node) {
  if (node.hooks()) return true;
  const TensorHooks* leaf = leaf_hooks(node);
  return leaf && leaf->pre;
}

void call_tensor_pre_hooks(Node& node, std::span<Tensor> inputs) {
  if (const TensorHooks* leaf = leaf_hooks(node); leaf && leaf->pre) {
    const std::shared_ptr<HookList<GradHook>> list = leaf->pre;  // a hook may clear the leaf's hooks
    run_gradient_hooks(*list, inputs[0]);
  }
  NodeHooks* hooks = node.hooks();
  if (!hooks) return;
  for (std::size_t k = 0; k < hooks->tensor_pre.size(); ++k) {
    const NodeHooks::TensorPreHooks entry = hooks->tensor_pre[k];  // a hook may register another tensor's first
    run_gradient_hooks(*entry.list, inputs[entry.input_nr]);
  }
  for (std::size_t k = 0; k < hooks->retains_grad.size(); ++k) {
    const NodeHooks::RetainsGrad entry = hooks->retains_grad[k];
    retain(*entry.slot, inputs[entry.input_nr]);
  }
}

void call_pre_hooks(Node& node, std::span<Tensor> inputs) {
  NodeHooks* hooks = node.hooks();
  if (!hooks || !hooks->pre) return;
  const std::shared_ptr<HookList<NodePreHook>> list = hooks->pre;
  list->for_each([&](const NodePreHook& hook, std::uint64_t id) {
    std::optional<std::vector<Tensor>> result = hook(to_vector(inputs));
    if (!result) return;
    check_replacements(inputs, *result, id);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if ((*result)[i].defined()) inputs[i] = std::move((*result)[i]);
  });
}

void call_post_hooks(Node& node, variable_list& outputs, std::span<const Tensor> inputs) {
  const std::shared_ptr<HookList<NodePostHook>> list = node.hooks()->post;
  const std::vector<Tensor> grad_outputs = to_vector(inputs);
  list->for_each([&](const NodePostHook& hook, std::uint64_t id) {
    std::optional<std::vector<Tensor>> result = hook(to_vector(outputs), grad_outputs);
    if (!result) return;
    check_replacements(outputs, *result, id);
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if ((*result)[i].defined()) outputs[i] = std::move((*result)[i]);
  });
}

void call_post_accumulate_grad_hooks(const Tensor& leaf, TensorHooks& hooks) {
  if (!hooks.post_accumulate_grad) return;
  const std::shared_ptr<HookList<PostAccumulateGradHook>> list = hooks.post_accumulate_grad;
  list->for_each([&](const PostAccumulateGradHook& hook, std::uint64_t) { hook(leaf); });
}

void move_retains_grad(AutogradMeta& meta, Node* new_fn, std::uint32_t new_output_nr) {
  if (!meta.hooks->retained || !meta.grad_fn || !meta.grad_fn->hooks()) return;
  std::vector<NodeHooks::RetainsGrad>& old = meta.grad_fn->hooks()->retains_grad;
  const auto it = std::find_if(old.begin(), old.end(), [&](const NodeHooks::RetainsGrad& r) { return r.slot == meta.hooks->retained; });
  if (it == old.end()) return;
  old.erase(it);
  if (new_fn) new_fn->ensure_hooks().retains_grad.push_back({new_output_nr, meta.hooks->retained});
}

}  // namespace strata::autograd

namespace strata {

namespace {
void check_requires_grad(const Tensor& t) {
  STRATA_CHECK(t.defined(), "cannot register a hook on an undefined Tensor");
  STRATA_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
}

TensorHooks& ensure_tensor_hooks(AutogradMeta& meta) {
  if (!meta.hooks) meta.hooks = std::make_unique<TensorHooks>();
  return *meta.hooks;
}

template <typename F>
RemovableHandle add_to(std::shared_ptr<HookList<F>>& list, F hook) {
  if (!list) list = std::make_shared<HookList<F>>();
  const std::uint64_t id = list->add(std::move(hook));
  return RemovableHandle(std::weak_ptr<HookListBase>(list), id);
}
}  // namespace

RemovableHandle register_hook(const Tensor& t, GradHook hook) {
  check_requires_grad(t);
  STRATA_CHECK(hook, "register_hook: the hook is empty");
  if (autograd::Node* fn = t.grad_fn()) {
    const std::uint32_t output_nr = t.impl()->autograd_meta()->output_nr;
    std::vector<autograd::NodeHooks::TensorPreHooks>& lists = fn->ensure_hooks().tensor_pre;
    auto it = std::find_if(lists.begin(), lists.end(), [&](const auto& l) { return l.input_nr == output_nr; });
    if (it == lists.end()) it = lists.insert(lists.end(), {output_nr, std::make_shared<HookList<GradHook>>()});
    return add_to(it->list, std::move(hook));
  }
  return add_to(ensure_tensor_hooks(*t.impl()->autograd_meta()).pre, std::move(hook));
}

void retain_grad(const Tensor& t) {
  STRATA_CHECK(t.defined() && t.requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  autograd::Node* fn = t.grad_fn();
  if (!fn) return;  // a leaf keeps its gradient anyway
  AutogradMeta& meta = *t.impl()->autograd_meta();
  TensorHooks& hooks = ensure_tensor_hooks(meta);
  if (hooks.retained) return;
  hooks.retained = std::make_shared<RetainedGradSlot>();
  hooks.retained->meta = &meta;
  fn->ensure_hooks().retains_grad.push_back({meta.output_nr, hooks.retained});
}

bool retains_grad(const Tensor& t) {
  const AutogradMeta* meta = t.defined() ? t.impl()->autograd_meta() : nullptr;
  return meta && meta->hooks && meta->hooks->retained && !t.is_leaf();
}

void detail::throw_post_accumulate_grad_hook_returned() {
  strata::detail::throw_error("Tensor post accumulate grad hooks should return None.");
}

RemovableHandle register_post_accumulate_grad_hook(const Tensor& t, PostAccumulateGradHook hook) {
  check_requires_grad(t);
  STRATA_CHECK(t.grad_fn() == nullptr, "post accumulate grad hooks cannot be registered on non-leaf tensors");
  STRATA_CHECK(hook, "register_post_accumulate_grad_hook: the hook is empty");
  return add_to(ensure_tensor_hooks(*t.impl()->autograd_meta()).post_accumulate_grad, std::move(hook));
}

}  // namespace strata

namespace strata::autograd {

NodeHooks& Node::ensure_hooks() {
  if (!hooks_) hooks_ = new NodeHooks();
  return *hooks_;
}

RemovableHandle Node::register_prehook(NodePreHook hook) {
  STRATA_CHECK(hook, "register_prehook: the hook is empty");
  return add_to(ensure_hooks().pre, std::move(hook));
}

RemovableHandle Node::register_hook(NodePostHook hook) {
  STRATA_CHECK(hook, "register_hook: the hook is empty");
  return add_to(ensure_hooks().post, std::move(hook));
}

}  // namespace strata::autograd
