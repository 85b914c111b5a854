// autograd/engine.cpp: dependencies, input buffers, the ready queue, and validate_outputs.
#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <functional>

#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "autograd/hooks.h"
#include "autograd/node_index.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_observer.h"
#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"
#include "core/util/non_copyable.h"
#include "core/util/warning.h"
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
  return !is_tensor_subclass_like(v) && v.is_non_overlapping_and_dense() && v.use_count() == 1 && v.impl()->has_data() &&
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
// each still waits for, and the gradients that have arrived. The constructor walks the graph once,
// finding each node's task through a NodeIndex (Note [A pass finds its nodes through a flat table]), and records,
// for every next edge of every task, the task that edge leads to and the input slot it fills. Running
// the pass then never looks a node up: the ready queue holds task numbers, and a gradient leaving
// output i goes to the slot recorded for edge i. All tasks' input buffers are one flat array of
// tensors (a node's inputs are adjacent); a node reads its gradients in place (Node::apply takes a
// span) and the pass drops them right after it ran, as PyTorch drops its InputBuffer.
//
// Note [autograd::grad runs only what leads to its inputs]
// A pass for autograd::grad captures the gradient arriving at each input's edge instead of letting
// AccumulateGrad write .grad (PyTorch's exec_info_ and captures_). After the walk it marks the tasks
// that must run: those from which a captured edge's node can be reached (init_to_execute). A task
// that is captured but need not run (a leaf's AccumulateGrad) runs its tensor pre-hooks, gives up its
// captured gradients and stops; a task that is neither is never queued. backward() has no captures,
// and its pass skips all of this.
class GraphTask {
 public:
  explicit GraphTask(Node* root) {
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
      if (--tasks_[static_cast<std::size_t>(next)].dependencies == 0 && should_execute(next)) push_ready(next);
    }
  }

  // The ready queue: AccumulateGrad (sequence number max) first, then the most recently created
  // node. A binary heap with std::priority_queue's own algorithm (push_heap/pop_heap with the same
  // comparison), so ties (several AccumulateGrads) leave in PyTorch's order.
  void push_ready(std::int32_t t) {
    ready_.push_back(Ready{node(t)->sequence_nr(), t});
    std::push_heap(ready_.begin(), ready_.end(), Earlier{});
  }
  bool has_ready() const { return !ready_.empty(); }
  std::int32_t pop_ready() {
    std::pop_heap(ready_.begin(), ready_.end(), Earlier{});
    const std::int32_t t = ready_.back().task;
    ready_.pop_back();
    return t;
  }

  // ---- autograd::grad (Note [autograd::grad runs only what leads to its inputs]) ----
  bool captures() const { return !captures_.empty(); }
  // Captures the gradient arriving at `edge` as result `output`; an edge the pass does not reach
  // captures nothing (its result stays undefined).
  void add_capture(const Edge& edge, std::size_t output) {
    const std::int32_t task = index_.find(edge.function.get());
    if (task >= 0) captures_.push_back(Capture{task, edge.input_nr, output});
  }
  // Marks the tasks that must run: those with a path to a captured task (a depth-first walk from the
  // root that decides each task once all the tasks below it are decided).
  void init_to_execute() {
    exec_.assign(tasks_.size(), kSkip);
    for (const Capture& c : captures_) exec_[static_cast<std::size_t>(c.task)] = kCapture;
    std::vector<std::uint8_t> visited(tasks_.size(), 0);
    std::vector<std::pair<std::int32_t, std::uint32_t>> stack{{0, 0}};  // (task, next edge to look at)
    visited[0] = 1;
    while (!stack.empty()) {
      auto& [t, k] = stack.back();
      const Task& task = tasks_[static_cast<std::size_t>(t)];
      if (k < task.node->num_outputs()) {
        const std::int32_t next = edge_targets_[task.first_edge + k++].task;
        if (next >= 0 && !visited[static_cast<std::size_t>(next)]) {
          visited[static_cast<std::size_t>(next)] = 1;
          stack.emplace_back(next, 0);
        }
        continue;
      }
      for (std::size_t i = 0; i < task.node->num_outputs(); ++i) {
        const std::int32_t next = edge_targets_[task.first_edge + i].task;
        if (next >= 0 && exec_[static_cast<std::size_t>(next)] != kSkip) exec_[static_cast<std::size_t>(t)] |= kRun;
      }
      stack.pop_back();
    }
  }
  bool should_execute(std::int32_t t) const { return exec_.empty() || exec_[static_cast<std::size_t>(t)] != kSkip; }
  // PyTorch's _will_engine_execute_node: `n` is in this pass's graph and will run or be captured.
  bool will_execute(const Node* n) const {
    const std::int32_t t = index_.find(n);
    return t >= 0 && should_execute(t);
  }
  bool needed(std::int32_t t) const { return exec_.empty() || (exec_[static_cast<std::size_t>(t)] & kRun); }
  // Copies task t's captured input gradients into `captured`.
  void capture(std::int32_t t, std::span<const Tensor> inputs, variable_list& captured) const {
    for (const Capture& c : captures_)
      if (c.task == t) captured[c.output] = inputs[c.input_nr];
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
  // A function object, not a function: the heap algorithms inline its call.
  struct Earlier {
    bool operator()(const Ready& a, const Ready& b) const { return a.sequence_nr < b.sequence_nr; }
  };
  struct Capture {
    std::int32_t task;
    std::uint32_t input_nr;
    std::size_t output;
  };
  static constexpr std::uint8_t kSkip = 0, kCapture = 1, kRun = 2;

  // n's task, added (with its input buffer) if n was not seen yet.
  std::int32_t find_or_add(Node* n) {
    bool added = false;
    const std::int32_t t = index_.find_or_add(n, static_cast<std::int32_t>(tasks_.size()), added);
    if (added) {
      tasks_.push_back(Task{n, 0, 0, static_cast<std::uint32_t>(inputs_.size())});
      for (std::size_t k = n->num_inputs(); k > 0; --k) inputs_.emplace_back();
    }
    return t;
  }

  NodeIndex index_;  // each reached node's task
  SmallVector<Task, 24> tasks_;
  SmallVector<EdgeTarget, 48> edge_targets_;  // per next edge of each task, in task order
  SmallVector<Tensor, 32> inputs_;            // every task's input buffer, back to back
  SmallVector<Ready, 16> ready_;
  std::vector<Capture> captures_;
  std::vector<std::uint8_t> exec_;  // per task, kSkip / kCapture | kRun; empty for backward()
};

// Note [The pass a thread is running]
// As PyTorch's current_graph_task: while run_backward runs, this thread knows its pass (an id unique
// in the process, its graph, and the callbacks queued for its end), so hooks can ask whether they run
// in a backward (current_graph_task_id), whether a node will run in it (will_engine_execute_node)
// and queue work for its end (queue_callback). A pass started from a hook (a reentrant backward)
// shadows the outer one until it returns. The final callbacks run in the order queued, after every
// node, while the pass is still current; a callback may queue more. A pass that fails drops them,
// as PyTorch's does. The id is drawn when first asked for, so a pass nobody asks about pays only for
// setting and restoring the pointer. The node being evaluated is kept beside it
// (current_autograd_node), for a tool that groups a backward's ops by the node that ran them.
struct CurrentPass {
  const GraphTask* task;
  std::int64_t id = -1;  // -1 until current_graph_task_id asks
  const Node* node = nullptr;  // the node being evaluated (current_autograd_node)
  std::vector<std::function<void()>> callbacks;
};
thread_local CurrentPass* current_pass = nullptr;
std::atomic<std::int64_t> next_pass_id{0};

class PassGuard : NonCopyable {
 public:
  explicit PassGuard(CurrentPass& pass) : previous_(std::exchange(current_pass, &pass)) {}
  ~PassGuard() { current_pass = previous_; }

 private:
  CurrentPass* previous_;
};

[[gnu::noinline]] void run_final_callbacks(CurrentPass& pass) {
  for (std::size_t i = 0; i < pass.callbacks.size(); ++i) {
    const std::function<void()> callback = std::move(pass.callbacks[i]);  // a callback may queue more
    callback();
  }
}

// PyTorch's call_function: the node's hooks (Note [The order hooks run in]), the node, validate_outputs.
[[gnu::noinline]] variable_list call_function_with_hooks(Node& node, std::span<Tensor> inputs) {
  call_tensor_pre_hooks(node, inputs);
  call_pre_hooks(node, inputs);
  if (node.hooks() && has_post_hooks(*node.hooks())) {
    const std::vector<Tensor> read(inputs.begin(), inputs.end());  // AccumulateGrad's steal test counts this copy
    variable_list outputs = node.apply(inputs);
    validate_outputs(node.next_edges(), outputs, &node);
    call_post_hooks(node, outputs, read);
    return outputs;
  }
  variable_list outputs = node.apply(inputs);
  validate_outputs(node.next_edges(), outputs, &node);
  return outputs;
}

inline variable_list call_function(Node& node, std::span<Tensor> inputs) {
  if ((node.hooks() || node.sequence_nr() == kAccumulateGradSequenceNr) && has_hooks(node)) [[unlikely]]
    return call_function_with_hooks(node, inputs);
  variable_list outputs = node.apply(inputs);
  validate_outputs(node.next_edges(), outputs, &node);
  return outputs;
}

// call_function inside PyTorch's two engine scopes, "autograd::engine::evaluate_function:
// AddmmBackward0" around the node's call and "AddmmBackward0" around the node itself, for a profiler
// (Note [Observing dispatch]); out of line, off the common path.
[[gnu::noinline]] variable_list call_function_observed(Node& node, std::span<Tensor> inputs) {
  const ObservedScope evaluate(std::string("autograd::engine::evaluate_function: ").append(node.name()));
  const ObservedScope apply(node.name());
  return call_function(node, inputs);
}

edge_list root_edges_of(std::span<const Tensor> roots) {
  edge_list root_edges;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    STRATA_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(std::move(e));
  }
  return root_edges;
}

}  // namespace

variable_list run_backward(std::span<const Tensor> roots, variable_list&& grads, bool keep_graph, bool create_graph,
                           std::span<const Edge> captures) {
  GradModeGuard grad_mode(create_graph);
  // A pass runs C++ formulas, which PyTorch never announces (Note [Function modes are popped while they run]).
  DisableFunctionModes no_function_modes;
  edge_list root_edges = root_edges_of(roots);
  validate_outputs(root_edges, grads, nullptr);
  // PyTorch's Engine::execute warns here, once per process, when a pass that accumulates into leaves'
  // .grad records its own graph: the gradient's history then reaches the parameter's AccumulateGrad,
  // which holds the parameter, which holds the gradient.
  if (create_graph && captures.empty()) [[unlikely]] {
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
  variable_list captured;
  if (!captures.empty()) [[unlikely]] {
    captured.resize(captures.size());
    for (std::size_t i = 0; i < captures.size(); ++i)
      if (captures[i].valid()) task.add_capture(captures[i], i);
    task.init_to_execute();
  }
  CurrentPass pass{&task};
  const PassGuard current(pass);
  if (root_edges.size() == 1) accumulate_input(task.inputs(0)[root_edges[0].input_nr], std::move(grads[0]));
  if (task.should_execute(0)) task.push_ready(0);

  // Read once per pass (Note [Observing dispatch]): a profiler started inside a pass sees the nodes
  // of the next one; its ops it sees at once.
  const bool observed = dispatch_trace_in_use();
  while (task.has_ready()) {
    const std::int32_t t = task.pop_ready();
    Node* node = task.node(t);
    pass.node = node;
    const std::span<Tensor> inputs = task.inputs(t);
    if (task.captures()) [[unlikely]] {
      // PyTorch's evaluate_function: a node that only gives up captured gradients runs its tensor
      // pre-hooks first; one that runs anyway is captured before its hooks.
      const bool needed = task.needed(t);
      if (!needed && has_hooks(*node)) call_tensor_pre_hooks(*node, inputs);
      task.capture(t, inputs, captured);
      if (!needed) {
        for (Tensor& g : inputs) g = Tensor();
        continue;
      }
    }
    // PyTorch's call_function and evaluate_function, in their order: the gradients the node read die
    // after validate_outputs and before any output is delivered (so a gradient passed through
    // unchanged may then be accumulated in place), not at the end of the pass.
    variable_list outputs = observed ? call_function_observed(*node, inputs) : call_function(*node, inputs);
    for (Tensor& g : inputs) g = Tensor();
    if (!keep_graph) node->release_variables();
    task.deliver(t, outputs);
  }
  pass.node = nullptr;
  if (!pass.callbacks.empty()) [[unlikely]] run_final_callbacks(pass);
  return captured;
}

std::int64_t current_graph_task_id() {
  if (!current_pass) return -1;
  if (current_pass->id < 0) current_pass->id = next_pass_id.fetch_add(1, std::memory_order_relaxed);
  return current_pass->id;
}

const Node* current_autograd_node() { return current_pass ? current_pass->node : nullptr; }

bool will_engine_execute_node(const Node& node) {
  STRATA_CHECK(current_pass, "_get_should_execute_nodes should only be called during the backward pass");
  return current_pass->task->will_execute(&node);
}

void queue_callback(std::function<void()> callback) {
  STRATA_CHECK(current_pass, "Final callbacks can only be installed during backward pass.");
  STRATA_CHECK(callback, "queue_callback: the callback is empty");
  current_pass->callbacks.push_back(std::move(callback));
}

}  // namespace strata::autograd
