// autograd/accumulate_grad.cpp: AccumulateGrad, finding a leaf's accumulator, and the layout contract.
#include "autograd/accumulate_grad.h"

#include <mutex>
#include <thread>

#include "autograd/grad_mode.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::autograd {

// Note [A leaf keeps its accumulator dormant]
// PyTorch's leaf holds its AccumulateGrad through a weak_ptr, so a leaf that no graph holds makes a
// new one for every recorded op and frees it with the graph: about 250 instructions of a 1,900
// instruction recorded add. Here the last reference going does not free the node (Node::destroy):
// it becomes dormant, still pointed at by the leaf but no longer holding it, and the next lookup
// revives it (count 1, the leaf held again) instead of allocating. Nothing can see the difference:
// while any graph holds the node it is the same shared node, as in PyTorch, and a dormant node has no
// reference, so nobody can ask for its identity, its variable or its count. The leaf's AutogradMeta
// frees a dormant node when the leaf dies (detail::delete_dormant_accumulator); a node that is not
// dormant holds the leaf, so the meta never outlives a live one. A node is made once per leaf and
// is never replaced: the meta's pointer is set by the first lookup and cleared only with the meta.
// The node's handle to its leaf is written once, when the node is made: going dormant gives up the
// reference the handle counts without clearing it, and reviving takes one again without writing it.
// So no thread ever writes what another may be reading, and the only shared state the protocol below
// changes is atomic. Reviving does not refresh the node's input metadata: no op changes a tensor's
// sizes, dtype or device in place (an op that did, such as resize_, would have to refresh it here).
//
// Note [A leaf's accumulator is found without a lock]
// The leaf points at its AccumulateGrad without holding it (the node holds the leaf: a reference back
// would be a cycle), and nodes count their references in place with no weak count (Note [Nodes count
// their references in place]), so a lookup must not take a reference to a node whose count has
// reached zero. (PyTorch takes a mutex in grad_accumulator(); an earlier version here took a per-leaf
// spin lock twice per recorded op.) A node is in one of four states:
//   live:     count > 0, not dormant; it holds one reference to the leaf.
//   dying:    count 0, not dormant; the thread that dropped the last reference (the releaser) is in
//             fall_dormant and holds the leaf reference the node held, in transit.
//   dormant:  count 0, dormant; no reference to the leaf.
//   reviving: count 0, not dormant; the thread that won the revival holds the leaf (its caller's
//             handle) and is taking a reference to it for the node.
// Each transition is made by exactly one thread:
//   live -> dying:     the decrement that reaches zero (IntrusivePtr::reset; a revivable node always
//                      counts down, Note [Releasing a sole reference]). No lookup can then take a
//                      reference: retain_if_alive refuses a count of zero.
//   dying -> dormant:  the releaser stores `dormant_ = true` (release), then drops the leaf reference
//                      in transit. The store is its last touch of the node: from then on a lookup may
//                      revive the node, and once the leaf dies the leaf's meta frees it. The leaf
//                      cannot die before the store, as the releaser still holds a reference to it.
//   dormant -> reviving: a compare-exchange of `dormant_` from true to false (acquire). Of several
//                      lookups at once exactly one wins.
//   reviving -> live:  the winner takes a reference to the leaf, then stores the count 1 (adopt). In
//                      that order: once the count is 1 another thread may take and drop references
//                      and so send the node dying, which gives up the leaf reference the node holds.
// A lookup (which holds the leaf, so the node cannot be freed under it) first tries to count one more
// reference on a live node (retain_if_alive, a compare-exchange from a nonzero count), then to revive
// a dormant one; when it sees neither (dying or reviving, each a handful of instructions in another
// thread) it yields and tries again. The leaf's reference count is counted up before the node goes
// live and down after it has gone dormant, so it never undercounts the node's reference; the meta
// frees the node only when the leaf dies, which needs every reference to the leaf gone, including one
// in transit, so the node is dormant then and nobody else can reach it. The release-acquire pairs
// (dormant_ above; the count's own decrement, acq_rel; the leaf's final decrement, which the meta's
// destruction follows) order every holder's use of the node before the next holder's and before
// its deletion. A recorded op on a leaf whose node is dormant costs two atomic read-modify-writes
// on the node (revive, then the last decrement) and two on the leaf's count. The first lookup makes
// the node and publishes it with a compare-exchange of the meta's pointer; a lookup that loses that
// race frees its own node, which no one else has seen, and uses the winner's.
// tests/autograd/test_autograd.cpp runs these races from several threads under the sanitizers.

AccumulateGrad::AccumulateGrad(const Tensor& variable)
    : Node(kAccumulateGradSequenceNr, FoundByLeaf{}), variable_(variable) {
  add_input_metadata(variable_);
}

AccumulateGrad::~AccumulateGrad() {}  // `variable_` holds no reference: not destroyed (see the union)

// Inline: a recorded op on a leaf whose graphs have all died comes here (in a training step, the first
// op on each parameter).
[[gnu::always_inline]] inline NodePtr AccumulateGrad::revive() {
  bool was_dormant = true;
  if (!dormant_.compare_exchange_strong(was_dormant, false, std::memory_order_acquire, std::memory_order_relaxed))
    return NodePtr();
  static_cast<void>(IntrusivePtr<TensorImpl>(variable_.impl()).release());  // the node's reference to its leaf
  return NodePtr::adopt(this);
}

void AccumulateGrad::fall_dormant() noexcept {
  TensorImpl* const leaf = variable_.impl();
  dormant_.store(true, std::memory_order_release);
  const Tensor in_transit(IntrusivePtr<TensorImpl>::reclaim(leaf));  // dies here: may free the leaf, and this node
}

NodePtr AccumulateGrad::make_for(const Tensor& leaf, AutogradMeta& meta) {
  Node* found = nullptr;
  NodePtr made = make_node<AccumulateGrad>(leaf);
  if (meta.grad_accumulator.compare_exchange_strong(found, made.get(), std::memory_order_acq_rel,
                                                    std::memory_order_acquire))
    return made;
  auto* lost = static_cast<AccumulateGrad*>(made.release());  // another lookup published its node first
  lost->fall_dormant();
  delete lost;
  return grad_accumulator(leaf, meta);
}

NodePtr AccumulateGrad::retain_or_revive_waiting() {
  for (;;) {
    std::this_thread::yield();  // dying or reviving in another thread: a few instructions from done
    if (NodePtr alive = NodePtr::retain_if_alive(this)) return alive;
    if (NodePtr revived = revive()) return revived;
  }
}

NodePtr grad_accumulator(const Tensor& leaf, AutogradMeta& meta) {
  Node* const found = meta.grad_accumulator.load(std::memory_order_acquire);
  if (!found) [[unlikely]] return AccumulateGrad::make_for(leaf, meta);
  auto* node = static_cast<AccumulateGrad*>(found);
  if (NodePtr alive = NodePtr::retain_if_alive(node)) return alive;
  if (NodePtr revived = node->revive()) return revived;
  return node->retain_or_revive_waiting();
}

void Node::release_found_by_leaf(Node* node) noexcept {
  static_cast<AccumulateGrad*>(node)->fall_dormant();  // the only revivable node
}

void delete_dormant_accumulator(Node* node) noexcept {
  STRATA_INTERNAL_ASSERT(static_cast<AccumulateGrad*>(node)->dormant_.load(std::memory_order_relaxed),
                         "a leaf died while its AccumulateGrad held it");
  delete node;
}

variable_list AccumulateGrad::apply(std::span<Tensor> grads) {
  Tensor grad = std::move(grads[0]);
  if (grad.defined()) accumulate_grad(variable_, std::move(grad));
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

// Note [Gradients accumulate under the leaf's lock]
// Backward passes on several threads may reach one leaf's AccumulateGrad at once (a model shared by
// threads that each run forward and backward): each reads the leaf's `grad`, then replaces it or adds
// into it in place. Unsynchronised, two of them both see no gradient and one result is lost, or add
// into the same storage at once. So accumulation holds the leaf's own lock (AutogradMeta::mutex, as
// PyTorch's AccumulateGrad::apply holds a lock) from reading `grad` to writing it, and the gradients
// of concurrent passes add up as if the passes ran one after another, in some order. Only the
// accumulation is serialised; the rest of each pass runs in parallel. Like PyTorch's, the lock is held
// while the accumulating ops dispatch: a dispatch mode or subclass handler that ran a backward into
// the same leaf from there would wait for itself. Reading `.grad` while another thread's backward
// writes it is the caller's race to avoid, as in PyTorch.
void accumulate_grad(const Tensor& variable, Tensor new_grad) {
  AutogradMeta& meta = variable.impl()->ensure_autograd_meta();
  const std::lock_guard<SmallMutex> lock(meta.mutex);
  Tensor& variable_grad = meta.grad;
  if (!variable_grad.defined()) {
    // Steal when this is the only reference (the engine moved it here) and its layout fits. The
    // detach() is PyTorch 2.8's: two dispatched detaches under the interposer
    // (Note [Detach and the interposer]).
    if (!is_grad_enabled() && new_grad.use_count() <= 1 && layout_contract_holds(new_grad, variable)) {
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
