// autograd/accumulate_grad.cpp: AccumulateGrad, finding a leaf's accumulator, and the layout contract.
#include "autograd/accumulate_grad.h"

#include <thread>

#include "autograd/grad_mode.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::autograd {

// Note [A leaf's accumulator is looked up under a lock]
// The leaf points at its AccumulateGrad without holding it (the node holds the leaf: a reference back
// would be a cycle). Nodes count their references in place, with no weak count (Note [Nodes count
// their references in place]), so between reading the pointer and taking a reference another thread
// could drop the last one. Both sides therefore run under a per-leaf spin lock (PyTorch takes a mutex
// in grad_accumulator() for the same reason): a lookup either takes a reference while the node is
// still counted, or revives it if it is dormant, or sees a count of zero on a node that is not
// dormant yet (its last reference is being dropped and its releaser waits for the lock) and makes a
// new accumulator; that releaser then finds itself replaced and frees its node. Uncontended, the lock
// is one exchange and one store; it is held for a few instructions.
//
// Note [A leaf keeps its accumulator dormant]
// PyTorch's leaf holds its AccumulateGrad through a weak_ptr, so a leaf that no graph holds makes a
// new one for every recorded op and frees it with the graph: about 250 instructions of a 1,900
// instruction recorded add. Here the last reference going does not free the node (Node::destroy):
// under the lock it becomes dormant, still pointed at by the leaf but no longer holding it, and the
// next lookup revives it (count 1, the leaf held again) instead of allocating. Nothing can see the
// difference: while any graph holds the node it is the same shared node, as in PyTorch, and a dormant
// node has no reference, so nobody can ask for its identity, its variable or its count. The leaf's
// AutogradMeta frees a dormant node when the leaf dies (detail::delete_dormant_accumulator); a node
// that is not dormant holds the leaf, so the meta never outlives a live one. The releaser drops the
// node's reference to the leaf after the lock, as its last step, since that may free the leaf and, with
// it, the node. Reviving does not refresh the node's input metadata: no op changes a tensor's sizes,
// dtype or device in place (an op that did, such as resize_, would have to refresh it here).
namespace {
class AccumulatorLock {
 public:
  explicit AccumulatorLock(AutogradMeta& meta) : flag_(meta.grad_accumulator_lock) {
    while (flag_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  ~AccumulatorLock() { flag_.clear(std::memory_order_release); }
  AccumulatorLock(const AccumulatorLock&) = delete;
  AccumulatorLock& operator=(const AccumulatorLock&) = delete;

 private:
  std::atomic_flag& flag_;
};
}  // namespace

AccumulateGrad::AccumulateGrad(const Tensor& variable) : Node(kAccumulateGradSequenceNr, FoundByLeaf{}), variable_(variable) {
  add_input_metadata(variable_);
}

NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta) {
  const AccumulatorLock lock(meta);
  if (auto* existing = static_cast<AccumulateGrad*>(meta.grad_accumulator)) {
    if (existing->dormant_) {  // no references: this is the first
      existing->dormant_ = false;
      existing->variable_ = leaf;
      return NodePtr::adopt(existing);
    }
    if (NodePtr alive = NodePtr::retain_if_alive(existing)) return alive;
  }
  NodePtr node = make_node<AccumulateGrad>(leaf);
  meta.grad_accumulator = node.get();
  return node;
}

void Node::release_found_by_leaf(Node* node) noexcept {
  auto* self = static_cast<AccumulateGrad*>(node);  // the only revivable node
  AutogradMeta& meta = *self->variable_.impl()->autograd_meta();  // alive: the node still holds the leaf
  Tensor leaf;
  {
    const AccumulatorLock lock(meta);
    if (meta.grad_accumulator == self) {
      self->dormant_ = true;
      leaf = std::move(self->variable_);
    }
  }
  if (!leaf.defined()) delete self;  // replaced by a lookup while its last reference was dropped
}  // `leaf` goes last: it may free the leaf, whose meta then frees this dormant node

void delete_dormant_accumulator(Node* node) noexcept {
  STRATA_INTERNAL_ASSERT(static_cast<AccumulateGrad*>(node)->dormant_, "a leaf died while its AccumulateGrad held it");
  delete node;
}

variable_list AccumulateGrad::apply(std::span<Tensor> grads) {
  Tensor grad = std::move(grads[0]);
  if (grad.defined()) accumulate_grad(variable_, std::move(grad));
  return {};
}

bool obeys_layout_contract(const Tensor& grad, const Tensor& variable) {
  if (!variable.is_non_overlapping_and_dense()) return grad.is_contiguous();
  for (std::size_t d = 0; d < grad.sizes().size(); ++d) {
    if (grad.sizes()[d] != 1) {
      if (grad.strides()[d] != variable.strides()[d]) return false;
    } else if (grad.strides()[d] == 0) {
      return false;
    }
  }
  return true;
}

namespace {
// PyTorch's clone_obey_contract: a copy of new_grad in the leaf's layout.
Tensor clone_obey_contract(const Tensor& new_grad, const Tensor& variable) {
  if (variable.is_non_overlapping_and_dense()) {
    Tensor out = new_empty_strided(new_grad, variable.sizes(), variable.strides(), {.dtype = variable.dtype()});
    copy_(out, new_grad);
    return out;
  }
  return clone(new_grad, MemoryFormat::Contiguous);
}
}  // namespace

void accumulate_grad(const Tensor& variable, Tensor new_grad) {
  Tensor& variable_grad = variable.impl()->ensure_autograd_meta().grad;
  if (!variable_grad.defined()) {
    // Steal when this is the only reference (the engine moved it here) and its layout fits. The
    // detach() is PyTorch 2.8's: two dispatched detaches under the interposer
    // (Note [Detach and the interposer]).
    if (!is_grad_enabled() && new_grad.use_count() <= 1 && obeys_layout_contract(new_grad, variable)) {
      variable_grad = detach(new_grad);
    } else {
      variable_grad = clone_obey_contract(new_grad, variable);
    }
  } else if (!is_grad_enabled()) {
    add_(variable_grad, new_grad);  // `variable_grad += new_grad`
  } else {
    variable_grad = add(variable_grad, new_grad);
  }
}

}  // namespace strata::autograd
