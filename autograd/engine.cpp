// autograd/engine.cpp: running a backward pass: validate_outputs, each node's call with its hooks,
// the pass a thread is running, and run_backward's loop over the ready queue. The pass's graph, input
// buffers and ready queue are graph_task.h's.
#include "autograd/engine.h"

#include <atomic>
#include <functional>

#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "autograd/graph_task.h"
#include "autograd/hooks.h"
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
                           std::span<const Edge> outputs, bool accumulate_grad) {
  GradModeGuard grad_mode(create_graph);
  // A pass runs C++ formulas, which PyTorch never announces (Note [Function modes are popped while they run]).
  DisableFunctionModes no_function_modes;
  edge_list root_edges = root_edges_of(roots);
  validate_outputs(root_edges, grads, nullptr);
  // PyTorch's Engine::execute warns here, once per process, when a pass that accumulates into leaves'
  // .grad records its own graph: the gradient's history then reaches the parameter's AccumulateGrad,
  // which holds the parameter, which holds the gradient.
  if (create_graph && accumulate_grad) [[unlikely]] {
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
  if (!outputs.empty()) [[unlikely]] {
    if (!accumulate_grad) captured.resize(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].valid()) continue;
      if (accumulate_grad) task.add_needed(outputs[i]);
      else task.add_capture(outputs[i], i);
    }
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

// PyTorch's Node::task_should_compute_output: a pass that runs only part of its graph asks whether
// the edge leads to a node that runs or is captured (Note [autograd::grad runs only what leads to
// its inputs]).
bool Node::task_should_compute_output(std::size_t i) const {
  if (!should_compute_output(i)) return false;
  if (!current_pass || !current_pass->task->prunes()) return true;
  return current_pass->task->will_execute(next_edges_[i].function.get());
}

void add_node_to_current_graph_task_exec_info(const Node* node) {
  if (current_pass && current_pass->task->prunes()) const_cast<GraphTask*>(current_pass->task)->add_extra_needed(node);
}

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
