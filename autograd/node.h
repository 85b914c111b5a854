// autograd/node.h: the backward graph. A Node computes the gradients of a forward op's inputs from
// the gradients of its outputs; its edges point at the nodes of those inputs. Each node records the
// shape and dtype of each of its inputs (the forward outputs) so the engine can check and reduce
// gradients (sum_to) before they arrive. Nodes are ordered by a per-thread sequence number.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace strata::autograd {

class Node;

// One input of a node: (node, which of its inputs). Invalid when the input needs no gradient.
struct Edge {
  std::shared_ptr<Node> function;
  std::uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

using variable_list = SmallVector<Tensor, 4>;  // a node's gradients: few, so kept inline
using edge_list = SmallVector<Edge, 3>;

// What a gradient arriving at a node's input must look like.
struct InputMetadata {
  explicit InputMetadata(const Tensor& t)
      : sizes(t.sizes()), dtype(t.dtype()), device(t.device()), is_subclass(t.subclass() != nullptr) {}
  DimVector sizes;
  ScalarType dtype;
  Device device;
  bool is_subclass = false;
};

inline constexpr std::uint64_t kAccumulateGradSequenceNr = std::numeric_limits<std::uint64_t>::max();

// The next value of this thread's sequence counter (PyTorch's at::sequence_number).
std::uint64_t next_sequence_nr();

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node(std::uint64_t sequence_nr, edge_list&& next_edges)
      : sequence_nr_(sequence_nr), next_edges_(std::move(next_edges)) {}
  explicit Node(std::uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}  // no next edges (AccumulateGrad)
  virtual ~Node();  // iterative: Note [Deep graphs are torn down without recursion]
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's node class name: "AddmmBackward0", "AccumulateGrad".
  virtual std::string_view name() const = 0;
  // grads[i] is the gradient of input i (undefined if none arrived); returns one per next edge.
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  std::uint64_t sequence_nr() const { return sequence_nr_; }
  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(std::size_t i) const { return next_edges_[i]; }
  std::size_t num_outputs() const { return next_edges_.size(); }
  // Whether output i (the gradient of forward input i) is needed by anyone.
  bool should_compute_output(std::size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }

  std::uint32_t add_input_metadata(const Tensor& t);
  std::size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(std::size_t i) const { return input_metadata_[i]; }

 protected:
  void set_next_edge(std::size_t i, Edge e) { next_edges_[i] = std::move(e); }
  // For a derived constructor that builds its edges in place (one fewer move of the edge list).
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }

 private:
  std::uint64_t sequence_nr_;
  edge_list next_edges_;
  SmallVector<InputMetadata, 2> input_metadata_;
};

}  // namespace strata::autograd
