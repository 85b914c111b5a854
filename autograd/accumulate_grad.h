// autograd/accumulate_grad.h: the node at each leaf that adds arriving gradients into `.grad`,
// with PyTorch's rules (torch/csrc/autograd/functions/accumulate_grad.h): the first gradient is
// stolen (detached, not copied) when nothing else holds it and its strides obey the layout contract;
// otherwise it is copied into the leaf's layout; later gradients are added in place. A leaf finds its
// accumulator through a pointer that holds no reference, as PyTorch's weak_ptr does.
#pragma once

#include "node.h"
#include "../core/util/small_mutex.h"

namespace strata {
struct AutogradMeta;
}

namespace strata::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& variable);
  ~AccumulateGrad() override;  // forgets itself in its leaf (Note [A leaf finds its accumulator through a weak pointer])
  std::string_view name() const override { return "AccumulateGrad"; }
  variable_list apply(std::span<Tensor> grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;  // the leaf: the node holds it, the leaf does not hold the node
  SmallMutex mutex_;  // held while accumulating (Note [Gradients accumulate under the accumulator's lock])
};

// The AccumulateGrad node of a leaf that requires grad: the one any graph still holds, or a new one;
// `meta` is the leaf's autograd state, which a leaf that requires grad has.
NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta);
// The leaf's AccumulateGrad if some graph holds one, else null (PyTorch's try_get_grad_accumulator).
NodePtr try_get_grad_accumulator(AutogradMeta& meta);

// Adds `new_grad` into variable.grad; the caller holds the leaf's AccumulateGrad's lock (Note
// [Gradients accumulate under the accumulator's lock]). `new_grad` is taken by value so a sole
// reference can be stolen; it is stolen only when at most `expected_refs` handles hold it (the engine
// keeps one more while the node has post-hooks).
void accumulate_grad(const Tensor& variable, Tensor new_grad, std::uint32_t expected_refs = 1);

// PyTorch's gradient layout contract: the gradient's strides match the leaf's where sizes exceed 1.
bool obeys_layout_contract(const Tensor& grad, const Tensor& variable);

}  // namespace strata::autograd
