// autograd/engine.cpp: dependencies, input buffers, the ready queue, and validate_outputs.
#include "autograd/engine.h"

#include <algorithm>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/interposer.h"
#include "core/warning.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// The node that starts a backward from several roots (PyTorch's GraphRoot).
class GraphRoot final : public Node {
 public:
  GraphRoot(edge_list edges, variable_list grads) : Node(next_sequence_nr(), std::move(edges)), grads_(std::move(grads)) {}
  std::string_view name() const override { return "GraphRoot"; }
  variable_list apply(std::span<Tensor>) override { return std::move(grads_); }

 private:
  variable_list grads_;
};

// The name validate_outputs' errors give: the node's, or "GraphRoot" for the roots' gradients.
std::string_view name_of(const Node* node) { return node ? node->name() : std::string_view("GraphRoot"); }

// Whether a gradient leaving along `edge` needs nothing from validate_outputs: no receiving input,
// no gradient, or already the input's shape and dtype.
inline bool fits(const Edge& edge, const Tensor& grad) {
  if (!edge.valid() || !grad.defined()) return true;
  const InputMetadata& meta = edge.function->input_metadata(edge.input_nr);
  return IntArrayRef(meta.sizes) == grad.sizes() && grad.dtype() == meta.dtype;
}

// validate_outputs' count check, out of line: the message needs the node's name, a virtual call.
[[gnu::noinline]] void check_gradient_count(const edge_list& edges, const variable_list& grads, const Node* node) {
  STRATA_CHECK(grads.size() == edges.size(), "Function ", name_of(node), " returned an invalid number of gradients - expected ",
               edges.size(), ", but got ", grads.size());
}

// validate_outputs' repair of gradient i, which does not fit its input: reduced with sum_to if it was
// broadcast, cast if its dtype differs. Out of line: most gradients fit.
[[gnu::noinline]] void fit_gradient(const Edge& edge, Tensor& grad, std::size_t i, const Node* node) {
  const InputMetadata& meta = edge.function->input_metadata(edge.input_nr);
  if (IntArrayRef(meta.sizes) != grad.sizes()) {
    STRATA_CHECK(is_expandable_to(meta.sizes, grad.sizes()), "Function ", name_of(node), " returned an invalid gradient at index ",
                 i, " - got ", shape_str(grad.sizes()), " but expected shape compatible with ", shape_str(meta.sizes));
    grad = sum_to(grad, meta.sizes);
  }
  if (grad.dtype() != meta.dtype) grad = to(grad, meta.dtype);
}

// PyTorch's validate_outputs: gradients leaving a node (null: the roots) must fit the inputs they arrive
// at. Inline, so a node whose gradients all fit (the common case) costs one short loop and no call.
// The node is named only in an error: a node's name is a virtual call nothing else needs.
inline void validate_outputs(const edge_list& edges, variable_list& grads, const Node* node) {
  if (grads.size() != edges.size()) [[unlikely]] check_gradient_count(edges, grads, node);
  for (std::size_t i = 0; i < grads.size(); ++i)
    if (!fits(edges[i], grads[i])) [[unlikely]] fit_gradient(edges[i], grads[i], i, node);
}

// PyTorch's InputBuffer::accumulate: add in place when this buffer holds the only reference to a
// plain dense tensor; out of place otherwise (so a mode sees aten.add.Tensor, as in PyTorch).
bool can_accumulate_inplace(const Tensor& v) {
  return !is_tensor_subclass_like(v) && v.is_non_overlapping_and_dense() && v.use_count() == 1 && v.impl()->has_storage() &&
         v.impl()->storage().use_count() == 1;
}

void accumulate_into_defined(Tensor& old, Tensor&& grad) {
  if (!is_grad_enabled() && can_accumulate_inplace(old)) {
    add_(old, grad);
  } else {
    old = add(old, grad);
  }
}

// The first gradient to arrive is moved into the empty slot; only a second one is added.
inline void accumulate_input(Tensor& old, Tensor&& grad) {
  if (!grad.defined()) return;
  if (!old.defined()) {
    old = std::move(grad);
  } else {
    accumulate_into_defined(old, std::move(grad));
  }
}

// Note [The pass holds its root, edges hold the rest]
// run_backward holds a reference to the root node for the whole pass, and every other node it reaches
// is held by the edges that lead to it, which nothing changes during a pass (running a node frees its
// saved tensors, never its edges). So the pass keeps plain pointers, and counts no references.
//
// Note [A pass resolves its edges once]
// One backward pass: the nodes reachable from the root (tasks, the root first), how many gradients
// each still waits for, and the gradients that have arrived. The constructor walks the graph once and
// finds each node through a small open-addressing table keyed by address (graphs are tens of nodes; a
// node-based hash map would allocate per node; one probe finds a node or the slot it goes in); it
// records, for every next edge of every task, the task that edge leads to and the input slot it fills.
// Running the pass then never looks a node up: the ready queue holds task numbers, and a gradient
// leaving output i goes to the slot recorded for edge i. All tasks' input
// buffers are one flat array of tensors (a node's inputs are adjacent), so there is no buffer per
// node to build, move or destroy; a node reads its gradients in place (Node::apply takes a span) and
// the pass drops them right after it ran, as PyTorch drops its InputBuffer.
// Everything has inline room for graphs of a few dozen nodes, and grows on the heap past that.
//
// Note [A node held once is reached once]
// Each edge holds a reference to the node it leads to, and no edge changes during a pass, so a node
// whose count is 1 is held by exactly the edge the walk reached it through: no other edge leads to
// it, and the walk never looks for it again. It is added without probing the table (growing the
// table inserts it all the same). A count other threads change meanwhile, taking or dropping
// references of their own, never falls below the number of this graph's edges to the node. In a
// training step about half the nodes are held once (a leaf's AccumulateGrad, an op whose output
// nothing saved).
class GraphTask {
 public:
  explicit GraphTask(Node* root) {
    slots_.resize_for_overwrite(32);
    std::fill(slots_.begin(), slots_.end(), -1);
    find_or_add(root);
    // Tasks are numbered in the order they are found, so the tasks not yet scanned are a suffix.
    for (std::size_t scanned = 0; scanned < tasks_.size(); ++scanned) {
      tasks_[scanned].first_edge = static_cast<std::uint32_t>(edge_targets_.size());
      for (const Edge& e : tasks_[scanned].node->next_edges()) {
        EdgeTarget target{-1, 0};
        if (e.valid()) {
          target.task = find_or_add(e.function.get());
          Task& next = tasks_[static_cast<std::size_t>(target.task)];
          ++next.dependencies;
          target.input = next.first_input + e.input_nr;
        }
        edge_targets_.push_back(target);
      }
    }
  }

  Node* node(std::int32_t t) const { return tasks_[static_cast<std::size_t>(t)].node; }
  // Task t's input buffer: a gradient slot per input of its node.
  std::span<Tensor> inputs(std::int32_t t) {
    const Task& task = tasks_[static_cast<std::size_t>(t)];
    return {inputs_.data() + task.first_input, task.node->num_inputs()};
  }
  // Delivers task t's node's gradients (`outputs`, one per next edge): each is added to the buffer
  // of the task its edge leads to, which is queued when it has everything it waits for.
  void deliver(std::int32_t t, variable_list& outputs) {
    const EdgeTarget* target = edge_targets_.data() + tasks_[static_cast<std::size_t>(t)].first_edge;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::int32_t next = target[i].task;
      if (next < 0) continue;
      accumulate_input(inputs_[target[i].input], std::move(outputs[i]));
      if (--tasks_[static_cast<std::size_t>(next)].dependencies == 0) push_ready(next);
    }
  }

  // The ready queue: AccumulateGrad (sequence number max) first, then the most recently created
  // node. A binary heap with std::priority_queue's own algorithm (push_heap/pop_heap with the same
  // comparison), so ties (several AccumulateGrads) leave in PyTorch's order.
  void push_ready(std::int32_t t) {
    ready_.push_back(Ready{node(t)->sequence_nr(), t});
    // push_heap over one element is a no-op that still sifts it (~13 instructions a node in a chain);
    // pop_heap checks for one element itself.
    if (ready_.size() > 1) std::push_heap(ready_.begin(), ready_.end(), Earlier{});
  }
  bool has_ready() const { return !ready_.empty(); }
  std::int32_t pop_ready() {
    std::pop_heap(ready_.begin(), ready_.end(), Earlier{});
    const std::int32_t t = ready_.back().task;
    ready_.pop_back();
    return t;
  }

 private:
  struct Task {
    Node* node;  // alive for the whole pass: Note [The pass holds its root, edges hold the rest]
    std::int32_t dependencies = 0;
    std::uint32_t first_edge = 0;   // this node's next edges' targets start at edge_targets_[first_edge]
    std::uint32_t first_input = 0;  // its input buffer starts at inputs_[first_input]
  };
  // Where a next edge leads: its task (-1 for an invalid edge) and the input slot in inputs_.
  struct EdgeTarget {
    std::int32_t task;
    std::uint32_t input;
  };
  struct Ready {
    std::uint64_t sequence_nr;
    std::int32_t task;
  };
  // A function object, not a function: the heap algorithms inline its call (a function pointer they
  // called out of line, twice per sift step).
  struct Earlier {
    bool operator()(const Ready& a, const Ready& b) const { return a.sequence_nr < b.sequence_nr; }
  };

  static std::size_t hash(const Node* n) { return (reinterpret_cast<std::uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ULL >> 32; }

  // n's task, added (with its input buffer) if n was not seen yet: one probe of the table either way,
  // or none for a node held once (Note [A node held once is reached once]).
  [[gnu::always_inline]] std::int32_t find_or_add(Node* n) {
    if (2 * (tasks_.size() + 1) > slots_.size()) grow();  // before probing: the probe's slot is where n goes
    if (n->use_count() == 1) return add(n);
    std::size_t i = hash(n) & (slots_.size() - 1);
    for (; slots_[i] >= 0; i = (i + 1) & (slots_.size() - 1))
      if (tasks_[static_cast<std::size_t>(slots_[i])].node == n) return slots_[i];
    const std::int32_t t = add(n);
    slots_[i] = t;
    return t;
  }

  // A new task for n, with its input buffer. Both always inline: out of line, the walk spilled more.
  [[gnu::always_inline]] std::int32_t add(Node* n) {
    const auto t = static_cast<std::int32_t>(tasks_.size());
    tasks_.push_back(Task{n, 0, 0, static_cast<std::uint32_t>(inputs_.size())});
    for (std::size_t k = n->num_inputs(); k > 0; --k) inputs_.emplace_back();  // cheaper than resize, which copies a default value
    return t;
  }

  void insert(std::int32_t t) {
    std::size_t i = hash(tasks_[static_cast<std::size_t>(t)].node) & (slots_.size() - 1);
    while (slots_[i] >= 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = t;
  }

  void grow() {
    const std::size_t n = slots_.size() * 2;
    slots_.resize_for_overwrite(n);
    std::fill(slots_.begin(), slots_.end(), -1);
    for (std::size_t t = 0; t < tasks_.size(); ++t) insert(static_cast<std::int32_t>(t));
  }

  SmallVector<Task, 24> tasks_;
  SmallVector<std::int32_t, 64> slots_;      // power-of-two open-addressing table of indices into tasks_
  SmallVector<EdgeTarget, 48> edge_targets_;  // per next edge of each task, in task order
  SmallVector<Tensor, 32> inputs_;           // every task's input buffer, back to back
  SmallVector<Ready, 16> ready_;
};

}  // namespace

void run_backward(std::span<const Tensor> roots, variable_list&& grads, bool keep_graph, bool create_graph) {
  GradModeGuard grad_mode(create_graph);
  edge_list root_edges;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    STRATA_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(std::move(e));
  }
  validate_outputs(root_edges, grads, nullptr);
  // PyTorch's Engine::execute warns here, once per process, when a pass that accumulates into leaves'
  // .grad (backward(), which is strata's only kind) records its own graph: the gradient's history then
  // reaches the parameter's AccumulateGrad, which holds the parameter, which holds the gradient.
  if (create_graph) [[unlikely]] {
    STRATA_WARN_ONCE(
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
        "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
        "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
        "the cycle and avoid the leak.");
  }

  // A single root starts at its own node, as PyTorch does (root_edges holds it for the pass); several
  // start at a GraphRoot.
  const NodePtr graph_root = root_edges.size() == 1 ? NodePtr() : make_node<GraphRoot>(root_edges, std::move(grads));
  GraphTask task(graph_root ? graph_root.get() : root_edges[0].function.get());
  if (root_edges.size() == 1) accumulate_input(task.inputs(0)[root_edges[0].input_nr], std::move(grads[0]));
  task.push_ready(0);

  while (task.has_ready()) {
    const std::int32_t t = task.pop_ready();
    Node* node = task.node(t);
    const std::span<Tensor> inputs = task.inputs(t);
    // PyTorch's call_function and evaluate_function, in their order: the gradients the node read die
    // after validate_outputs and before any output is delivered (so a gradient passed through
    // unchanged may then be accumulated in place), not at the end of the pass.
    variable_list outputs = node->apply(inputs);
    validate_outputs(node->next_edges(), outputs, node);
    for (Tensor& g : inputs) g = Tensor();
    if (!keep_graph) node->release_variables();
    task.deliver(t, outputs);
  }
}

}  // namespace strata::autograd
