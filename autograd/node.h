// autograd/node.h: the backward graph. A Node computes the gradients of a forward op's inputs from
// the gradients of its outputs; its edges point at the nodes of those inputs. Each node records the
// shape and dtype of each of its inputs (the forward outputs) so the engine can check and reduce
// gradients (sum_to) before they arrive. Nodes are ordered by a per-thread sequence number.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>
#include <span>
#include <string_view>

#include "../core/util/intrusive_ptr.h"
#include "../core/util/small_object_pool.h"
#include "../core/tensor.h"
#include "../core/tensor_hooks.h"

namespace strata::autograd {

class Node;
struct NodeHooks;  // autograd/hooks.h

// Note [Nodes count their references in place]
// A node is held by the edges of the nodes above it, by the tensors it made (their grad_fn), by saved
// tensors and, during a backward, by the pass's root. Nodes count those references in place
// (RefCounted, as tensors do) instead of through std::shared_ptr: no control block, no weak count, no
// enable_shared_from_this (a node hands out a reference to itself by making a NodePtr from `this`),
// and a fresh node takes its first reference with a plain store.
// The count is atomic. One graph task runs on one thread, but tensors may be shared across threads,
// and with them the nodes behind them: two threads recording ops on the same parameter both take
// references to its AccumulateGrad, and one thread may drop the last tensor of a graph whose nodes
// another thread's graph also reaches. A non-atomic count would turn that into a double free. An
// uncontended atomic increment is cheap; most transfers are moves, which do not count, and
// a sole reference is dropped without an atomic (Note [Releasing a sole reference]) except an
// AccumulateGrad's, which its leaf finds through a pointer that holds no reference (Note [A leaf
// finds its accumulator through a weak pointer], autograd/accumulate_grad.cpp).
// Nodes are allocated from the per-thread small-object pool: operator delete is sized, and a virtual
// destructor passes it the size of the most derived class.
using NodePtr = IntrusivePtr<Node>;

// One input of a node: (node, which of its inputs). Invalid when the input needs no gradient.
struct Edge {
  NodePtr function;
  std::uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

using variable_list = SmallVector<Tensor, 4>;  // a node's gradients: few, so kept inline
using edge_list = SmallVector<Edge, 3>;

// What a gradient arriving at a node's input must look like.
struct InputMetadata {
  explicit InputMetadata(const Tensor& t)
      : sizes(t.sizes()), dtype(t.dtype()), device(t.device()), is_subclass(t.subclass() != nullptr) {}
  InputMetadata() = default;  // an output that is None: no tensor carries an edge to it
  DimVector sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device = Device::CPU;
  bool is_subclass = false;
};

// A node pre-hook gets the gradients arriving at the node (its inputs; undefined where none arrived)
// and may return replacements for all of them; a post-hook also gets what the node returned (the
// gradients of the forward inputs) and may replace those. std::nullopt leaves them as they were.
using NodePreHook = std::function<std::optional<std::vector<Tensor>>(const std::vector<Tensor>& grad_outputs)>;
using NodePostHook = std::function<std::optional<std::vector<Tensor>>(const std::vector<Tensor>& grad_inputs,
                                                                      const std::vector<Tensor>& grad_outputs)>;

inline constexpr std::uint64_t kAccumulateGradSequenceNr = std::numeric_limits<std::uint64_t>::max();

// The next value of this thread's sequence counter (PyTorch's at::sequence_number). Inline: every
// recorded op takes one.
namespace detail {
inline thread_local std::uint64_t sequence_counter = 0;
}
inline std::uint64_t next_sequence_nr() { return detail::sequence_counter++; }

class Node : public RefCounted<Node> {
 public:
  Node(std::uint64_t sequence_nr, edge_list&& next_edges)
      : sequence_nr_(sequence_nr), next_edges_(std::move(next_edges)) {}
  // For a derived constructor that adds its edges itself (add_next_edge).
  explicit Node(std::uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  // A node without next edges that its leaf finds through a pointer holding no reference
  // (AccumulateGrad): Note [A leaf finds its accumulator through a weak pointer].
  struct WeaklyReferenced {};
  Node(std::uint64_t sequence_nr, WeaklyReferenced) : sequence_nr_(sequence_nr), weakly_referenced_(true) {}
  virtual ~Node();  // bounded recursion: Note [Deep graphs are torn down without recursion]
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  static void* operator new(std::size_t bytes) { return pool::allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { pool::deallocate(p, bytes); }

  // PyTorch's node class name: "AddmmBackward0", "AccumulateGrad".
  virtual std::string_view name() const = 0;
  // grads[i] is the gradient of input i (undefined if none arrived), in the engine's input buffer (the
  // node may move from it); returns one per next edge.
  virtual variable_list apply(std::span<Tensor> grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  std::uint64_t sequence_nr() const { return sequence_nr_; }
  bool weakly_referenced() const { return weakly_referenced_; }  // see Note [Releasing a sole reference]
  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(std::size_t i) const { return next_edges_[i]; }
  std::size_t num_outputs() const { return next_edges_.size(); }
  // Whether output i (the gradient of forward input i) is needed by anyone.
  bool should_compute_output(std::size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }
  // Whether output i is needed by the backward pass running now: should_compute_output, and, in a pass
  // that runs only part of the graph (autograd::grad, backward(inputs=...)), its edge leads to a node
  // the pass runs or captures (PyTorch's task_should_compute_output; autograd/engine.cpp).
  bool task_should_compute_output(std::size_t i) const;

  std::uint32_t add_input_metadata(const Tensor& t) {
    input_metadata_.emplace_back(t);
    return static_cast<std::uint32_t>(input_metadata_.size() - 1);
  }
  // PyTorch's add_input_metadata(Node::undefined_input()): an output that is None keeps its place.
  std::uint32_t add_undefined_input() {
    input_metadata_.emplace_back();
    return static_cast<std::uint32_t>(input_metadata_.size() - 1);
  }
  std::size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(std::size_t i) const { return input_metadata_[i]; }

  // Hooks registered on this node or on the tensors it made (autograd/hooks.h); null when none, which
  // is all the engine reads of them for most nodes. An AccumulateGrad's tensor hooks live on its leaf.
  NodeHooks* hooks() const { return hooks_; }
  NodeHooks& ensure_hooks();
  // grad_fn.register_prehook(hook) and grad_fn.register_hook(hook) (autograd/hooks.cpp).
  RemovableHandle register_prehook(NodePreHook hook);
  RemovableHandle register_hook(NodePostHook hook);

 protected:
  void set_next_edge(std::size_t i, Edge e) { next_edges_[i] = std::move(e); }
  // For a derived constructor that builds its edges in place (one fewer move of the edge list).
  // Appends an invalid edge, for the caller to fill in place.
  Edge& add_next_edge() { return next_edges_.emplace_back(); }

 private:
  // ~Node's slow path, from the first edge that continues a chain (Note [Deep graphs are torn down
  // without recursion]).
  [[gnu::noinline]] void tear_down_from(Edge* first);
  std::uint64_t sequence_nr_;
  bool weakly_referenced_ = false;
  NodeHooks* hooks_ = nullptr;  // owned; raw so that node.h needs no NodeHooks (~Node deletes it)
  edge_list next_edges_;
  SmallVector<InputMetadata, 2> input_metadata_;
};

// A new node of type T, holding its first reference. Always inline: the autograd handler makes one per
// recorded op.
template <typename T, typename... Args>
[[gnu::always_inline]] inline NodePtr make_node(Args&&... args) {
  return NodePtr::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace strata::autograd
