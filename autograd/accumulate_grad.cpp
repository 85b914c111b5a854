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
// would be a cycle), and the node clears that pointer when it dies. Nodes count their references in
// place, with no weak count (Note [Nodes count their references in place]), so between reading the
// pointer and taking a reference another thread could drop the last one and free the node. Both
// sides therefore run under a per-leaf spin lock (PyTorch takes a mutex in grad_accumulator() for
// the same reason): a lookup either takes a reference while the node is still counted, or sees a
// count of zero (the node is dying and waits for the lock to clear the pointer) and makes a new
// accumulator. Uncontended, the lock is one exchange and one store; it is held for a few instructions.
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

AccumulateGrad::~AccumulateGrad() {
  AutogradMeta& meta = *variable_.impl()->autograd_meta();  // made before this node
  const AccumulatorLock lock(meta);
  if (meta.grad_accumulator == this) meta.grad_accumulator = nullptr;
}

NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta) {
  const AccumulatorLock lock(meta);
  if (meta.grad_accumulator) {
    if (NodePtr existing = NodePtr::retain_if_alive(meta.grad_accumulator)) return existing;
  }
  NodePtr node = make_node<AccumulateGrad>(leaf);
  meta.grad_accumulator = node.get();
  return node;
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
