// autograd/accumulate_grad.cpp: AccumulateGrad, finding a leaf's accumulator, and the layout contract.
#include "autograd/accumulate_grad.h"

#include <mutex>

#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::autograd {

// Note [A leaf finds its accumulator through a weak pointer]
// A leaf's AccumulateGrad holds the leaf, so the leaf cannot hold it back (a cycle): as PyTorch's
// AutogradMeta::grad_accumulator_ is a weak_ptr, the leaf's meta keeps a pointer that holds no
// reference, guarded by the leaf's lock (AutogradMeta::mutex). Every graph that reaches the leaf while
// one is alive shares that node; when the last graph lets it go it dies, and the next recorded op on
// the leaf makes a new one. The protocol, all under the leaf's lock:
//   lookup:  if the pointer is set and the node's count is not zero, count one more reference
//            (IntrusivePtr::retain_if_alive, weak_ptr::lock); otherwise make a node and point at it.
//   death:   ~AccumulateGrad takes the lock and clears the pointer if it still points at this node.
// A node whose count reached zero stays in memory until its destructor has taken the lock, so a
// lookup holding the lock may read its count; it sees zero, and replaces the pointer with a new node,
// which the dying destructor then leaves alone. The count of a weakly referenced node always counts
// down atomically (Note [Releasing a sole reference]): a lookup may take a reference at any moment.
// The node holds the leaf until its destructor returns, so the leaf's meta and lock outlive it.

AccumulateGrad::AccumulateGrad(const Tensor& variable) : Node(kAccumulateGradSequenceNr, WeaklyReferenced{}), variable_(variable) {
  add_input_metadata(variable_);
}

AccumulateGrad::~AccumulateGrad() {
  AutogradMeta& meta = *variable_.impl()->autograd_meta();
  const std::lock_guard<SmallMutex> lock(meta.mutex);
  if (meta.grad_accumulator == this) meta.grad_accumulator = nullptr;
}

NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta) {
  const std::lock_guard<SmallMutex> lock(meta.mutex);
  if (meta.grad_accumulator)
    if (NodePtr alive = NodePtr::retain_if_alive(meta.grad_accumulator)) return alive;
  NodePtr made = make_node<AccumulateGrad>(leaf);
  meta.grad_accumulator = made.get();
  return made;
}

NodePtr try_get_grad_accumulator(AutogradMeta& meta) {
  const std::lock_guard<SmallMutex> lock(meta.mutex);
  return meta.grad_accumulator ? NodePtr::retain_if_alive(meta.grad_accumulator) : NodePtr();
}

// PyTorch's AccumulateGrad::apply: accumulate, then the leaf's post-accumulate-grad hooks, outside the
// lock. While the node has post-hooks the engine keeps a copy of its inputs for them, which the steal
// test allows for.
variable_list AccumulateGrad::apply(std::span<Tensor> grads) {
  Tensor grad = std::move(grads[0]);
  if (grad.defined()) {
    const std::lock_guard<SmallMutex> lock(mutex_);  // Note [Gradients accumulate under the accumulator's lock]
    accumulate_grad(variable_, std::move(grad), hooks() && has_post_hooks(*hooks()) ? 2 : 1);
  }
  if (const AutogradMeta* meta = variable_.impl()->autograd_meta(); meta->hooks) [[unlikely]]
    call_post_accumulate_grad_hooks(variable_, *meta->hooks);
  return {};
}

namespace {
// obeys_layout_contract, inlined into accumulate_grad's steal test (once per leaf per backward pass).
[[gnu::always_inline]] inline bool layout_contract_holds(const Tensor& grad, const Tensor& variable) {
  // A contiguous leaf (the common case, read from its cached flag) is non-overlapping and dense.
  if (!variable.is_contiguous() && !variable.is_non_overlapping_and_dense()) return grad.is_contiguous();
  for (std::size_t d = 0; d < grad.sizes().size(); ++d) {
    if (grad.sizes()[d] != 1) {
      if (grad.strides()[d] != variable.strides()[d]) return false;
    } else if (grad.strides()[d] == 0) {
      return false;
    }
  }
  return true;
}
}  // namespace

bool obeys_layout_contract(const Tensor& grad, const Tensor& variable) { return layout_contract_holds(grad, variable); }

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

// Note [Gradients accumulate under the accumulator's lock]
// Backward passes on several threads may reach one leaf's AccumulateGrad at once (a model shared by
// threads that each run forward and backward): each reads the leaf's `grad`, then replaces it or adds
// into it in place. Unsynchronised, two of them both see no gradient and one result is lost, or add
// into the same storage at once. So accumulation holds the AccumulateGrad node's own lock, as
// PyTorch's AccumulateGrad::apply holds the node's mutex_, from reading `grad` to writing it, and the
// gradients of concurrent passes add up as if the passes ran one after another, in some order. Every
// graph alive at once shares the leaf's one node (Note [A leaf finds its accumulator through a weak
// pointer]), so one lock serialises them. It is not the leaf's lock: under create_graph the
// accumulating ops are recorded, and recording an op on the leaf itself (x.backward(x), whose
// gradient is x) looks up the leaf's accumulator under the leaf's lock, which would then wait for
// itself. Only the accumulation is serialised; the rest of each pass runs in parallel. Like PyTorch's,
// the lock is held while the accumulating ops dispatch: a dispatch mode or subclass handler that ran
// a backward into the same leaf from there would wait for itself. Reading `.grad` while another
// thread's backward writes it is the caller's race to avoid, as in PyTorch.
void accumulate_grad(const Tensor& variable, Tensor new_grad, std::uint32_t expected_refs) {
  AutogradMeta& meta = variable.impl()->ensure_autograd_meta();
  Tensor& variable_grad = meta.grad;
  if (!variable_grad.defined()) {
    // Steal when this is the only reference (the engine moved it here) and its layout fits. The
    // detach() is PyTorch 2.8's: two dispatched detaches under the interposer
    // (Note [Detach and the interposer]).
    if (!is_grad_enabled() && new_grad.use_count() <= expected_refs && layout_contract_holds(new_grad, variable)) {
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
