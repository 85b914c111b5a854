// autograd/engine.cpp: dependencies, input buffers, the ready queue, and validate_outputs.
#include "autograd/engine.h"

#include <queue>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/interposer.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// The node that starts a backward from several roots (PyTorch's GraphRoot).
class GraphRoot final : public Node {
 public:
  GraphRoot(edge_list edges, variable_list grads) : Node(next_sequence_nr(), std::move(edges)), grads_(std::move(grads)) {}
  std::string_view name() const override { return "GraphRoot"; }
  variable_list apply(variable_list&&) override { return std::move(grads_); }

 private:
  variable_list grads_;
};

// AccumulateGrad (sequence number max) first, then the most recently created node.
struct LaterNodeFirst {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// PyTorch's validate_outputs: gradients leaving a node must fit the inputs they arrive at.
void validate_outputs(const edge_list& edges, variable_list& grads, std::string_view node_name) {
  STRATA_CHECK(grads.size() == edges.size(), "Function ", node_name, " returned an invalid number of gradients - expected ",
               edges.size(), ", but got ", grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Edge& edge = edges[i];
    Tensor& grad = grads[i];
    if (!edge.valid() || !grad.defined()) continue;
    const InputMetadata& meta = edge.function->input_metadata(edge.input_nr);
    if (IntArrayRef(meta.sizes) != grad.sizes()) {
      STRATA_CHECK(is_expandable_to(meta.sizes, grad.sizes()), "Function ", node_name, " returned an invalid gradient at index ",
                   i, " - got ", shape_str(grad.sizes()), " but expected shape compatible with ", shape_str(meta.sizes));
      grad = sum_to(grad, meta.sizes);
    }
    if (grad.dtype() != meta.dtype) grad = to(grad, meta.dtype);
  }
}

// PyTorch's InputBuffer::accumulate: add in place when this buffer holds the only reference to a
// plain dense tensor; out of place otherwise (so a mode sees aten.add.Tensor, as in PyTorch).
bool can_accumulate_inplace(const Tensor& v) {
  return !is_tensor_subclass_like(v) && v.is_non_overlapping_and_dense() && v.use_count() == 1 && v.impl()->has_storage() &&
         v.impl()->storage().use_count() == 1;
}

void accumulate_input(variable_list& buffer, std::size_t pos, Tensor&& grad) {
  if (!grad.defined()) return;
  Tensor& old = buffer[pos];
  if (!old.defined()) {
    old = std::move(grad);
  } else if (!is_grad_enabled() && can_accumulate_inplace(old)) {
    add_(old, grad);
  } else {
    old = add(old, grad);
  }
}

// Note [The pass holds its root, edges hold the rest]
// run_backward holds a reference to the root node for the whole pass, and every other node it reaches
// is held by the edges that lead to it, which nothing changes during a pass (running a node frees its
// saved tensors, never its edges). So the pass keeps plain pointers, and counts no references.
//
// One backward pass: the nodes reachable from the root, how many gradients each still waits for,
// and the gradients that have arrived. Nodes are found through a small open-addressing table keyed
// by address (graphs are tens of nodes; a node-based hash map would allocate per node).
class GraphTask {
 public:
  explicit GraphTask(Node* root) {
    slots_.resize(32, -1);
    SmallVector<Node*, 32> stack;
    stack.push_back(root);
    add_task(root);
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      for (const Edge& e : node->next_edges()) {
        if (!e.valid()) continue;
        int i = find(e.function.get());
        if (i < 0) {
          i = add_task(e.function.get());
          stack.push_back(e.function.get());
        }
        ++tasks_[static_cast<std::size_t>(i)].dependencies;
      }
    }
  }

  variable_list& buffer(Node* node) {
    Task& t = tasks_[static_cast<std::size_t>(find(node))];
    if (t.buffer.empty()) t.buffer.resize(node->num_inputs());
    return t.buffer;
  }

  void deliver(const Edge& edge, Tensor&& grad) {
    Node* next = edge.function.get();
    Task& t = tasks_[static_cast<std::size_t>(find(next))];
    if (t.buffer.empty()) t.buffer.resize(next->num_inputs());
    accumulate_input(t.buffer, edge.input_nr, std::move(grad));
    if (--t.dependencies == 0) ready.push(next);
  }

  std::priority_queue<Node*, SmallVector<Node*, 16>, LaterNodeFirst> ready;

 private:
  struct Task {
    Node* node;  // alive for the whole pass: Note [The pass holds its root, edges hold the rest]
    int dependencies = 0;
    variable_list buffer;
  };

  static std::size_t hash(const Node* n) { return (reinterpret_cast<std::uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ULL >> 32; }

  int find(const Node* n) const {
    for (std::size_t i = hash(n) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const int t = slots_[i];
      if (t < 0) return -1;
      if (tasks_[static_cast<std::size_t>(t)].node == n) return t;
    }
  }

  int add_task(Node* n) {
    if (2 * (tasks_.size() + 1) > slots_.size()) grow();
    tasks_.push_back(Task{n, 0, {}});
    insert(static_cast<int>(tasks_.size() - 1));
    return static_cast<int>(tasks_.size() - 1);
  }

  void insert(int t) {
    std::size_t i = hash(tasks_[static_cast<std::size_t>(t)].node) & (slots_.size() - 1);
    while (slots_[i] >= 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = t;
  }

  void grow() {
    const std::size_t n = slots_.size() * 2;
    slots_.clear();
    slots_.resize(n, -1);
    for (std::size_t t = 0; t < tasks_.size(); ++t) insert(static_cast<int>(t));
  }

  // Inline capacities cover graphs of a few dozen nodes without touching the heap.
  SmallVector<Task, 24> tasks_;
  SmallVector<int, 64> slots_;  // power-of-two open-addressing table of indices into tasks_
};

}  // namespace

void run_backward(const std::vector<Tensor>& roots, variable_list grads, bool keep_graph, bool create_graph) {
  GradModeGuard grad_mode(create_graph);
  edge_list root_edges;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    STRATA_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(std::move(e));
  }
  validate_outputs(root_edges, grads, "GraphRoot");

  // A single root starts at its own node, as PyTorch does; several start at a GraphRoot.
  const NodePtr graph_root =
      root_edges.size() == 1 ? root_edges[0].function : make_node<GraphRoot>(root_edges, std::move(grads));
  GraphTask task(graph_root.get());
  if (root_edges.size() == 1) accumulate_input(task.buffer(graph_root.get()), root_edges[0].input_nr, std::move(grads[0]));
  task.ready.push(graph_root.get());

  while (!task.ready.empty()) {
    Node* node = task.ready.top();
    task.ready.pop();
    variable_list outputs = node->apply(std::move(task.buffer(node)));
    if (!keep_graph) node->release_variables();
    validate_outputs(node->next_edges(), outputs, node->name());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Edge& edge = node->next_edge(i);
      if (edge.valid()) task.deliver(edge, std::move(outputs[i]));
    }
  }
}

}  // namespace strata::autograd
