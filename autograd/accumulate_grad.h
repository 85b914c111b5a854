// autograd/accumulate_grad.h: the node at each leaf that adds arriving gradients into `.grad`,
// with PyTorch's rules (torch/csrc/autograd/functions/accumulate_grad.h): the first gradient is
// stolen (detached, not copied) when nothing else holds it and its strides obey the layout contract;
// otherwise it is copied into the leaf's layout; later gradients are added in place. A leaf makes its
// accumulator on first use and shares it while any graph holds it; in between it keeps it dormant.
#pragma once

#include <atomic>

#include "autograd/node.h"

namespace strata {
struct AutogradMeta;
}

namespace strata::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& variable);
  ~AccumulateGrad() override;  // only ever dormant (or never shared): `variable_` holds no reference then
  std::string_view name() const override { return "AccumulateGrad"; }
  variable_list apply(std::span<Tensor> grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  friend NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta);
  friend class Node;  // Node::release_found_by_leaf puts it to sleep
  friend void delete_dormant_accumulator(Node* node) noexcept;
  // The leaf's first lookup (or one of several racing to be first): makes its node and publishes it
  // in `meta`, or frees it and uses the node another lookup published.
  [[gnu::noinline]] static NodePtr make_for(const Tensor& leaf, AutogradMeta& meta);
  // A reference (ours) to a node that was dormant, or null if it was not (Note [A leaf's accumulator
  // is found without a lock]).
  NodePtr revive();
  // Retries retain_if_alive and revive() until one succeeds, while another thread sends the node dormant
  // or revives it.
  [[gnu::noinline]] NodePtr retain_or_revive_waiting();
  // Gives up the node's reference to its leaf and marks it dormant; the node may be freed once this returns.
  void fall_dormant() noexcept;

  // The leaf, written once, here, and never again. The node holds one reference to it while anyone
  // holds the node (as PyTorch does; the leaf holds this node without a reference) and none while it
  // is dormant, so the handle is kept in a union and never destroyed as a Tensor (Note [A leaf keeps
  // its accumulator dormant]).
  union {
    Tensor variable_;
  };
  std::atomic<bool> dormant_{false};
};

// The AccumulateGrad node of a leaf that requires grad (created once, then shared, revived when it was
// dormant); `meta` is the leaf's autograd state, which a leaf that requires grad has.
NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta);

// Frees a leaf's dormant accumulator when the leaf dies (installed as detail::delete_dormant_accumulator).
void delete_dormant_accumulator(Node* node) noexcept;

// Adds `new_grad` into variable.grad, holding the leaf's lock (Note [Gradients accumulate under the
// leaf's lock]). `new_grad` is taken by value so a sole reference can be stolen.
void accumulate_grad(const Tensor& variable, Tensor new_grad);

// PyTorch's gradient layout contract: the gradient's strides match the leaf's where sizes exceed 1.
bool obeys_layout_contract(const Tensor& grad, const Tensor& variable);

}  // namespace strata::autograd
