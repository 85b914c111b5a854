// autograd/accumulate_grad.h: the node at each leaf that adds arriving gradients into `.grad`,
// with PyTorch's rules (torch/csrc/autograd/functions/accumulate_grad.h): the first gradient is
// stolen (detached, not copied) when nothing else holds it and its strides obey the layout contract;
// otherwise it is copied into the leaf's layout; later gradients are added in place. A leaf makes its
// accumulator on first use and shares it while any graph holds it.
#pragma once

#include "autograd/node.h"

namespace strata {
struct AutogradMeta;
}

namespace strata::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& variable);
  ~AccumulateGrad() override;  // forgets itself in the leaf
  std::string_view name() const override { return "AccumulateGrad"; }
  variable_list apply(std::span<Tensor> grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;  // the leaf (held strongly, as PyTorch does; the leaf holds this node weakly)
};

// The AccumulateGrad node of a leaf that requires grad (created once, then shared); `meta` is the
// leaf's autograd state, which a leaf that requires grad has.
NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta);

// Adds `new_grad` into variable.grad. `new_grad` is taken by value so a sole reference can be stolen.
void accumulate_grad(const Tensor& variable, Tensor new_grad);

// PyTorch's gradient layout contract: the gradient's strides match the leaf's where sizes exceed 1.
bool obeys_layout_contract(const Tensor& grad, const Tensor& variable);

}  // namespace strata::autograd
