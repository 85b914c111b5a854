// autograd/engine.cpp: dependencies, input buffers, the ready queue, and validate_outputs.
#include "autograd/engine.h"

#include <queue>
#include <string>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
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

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t size = shape[shape.size() - 1 - i];
    if (size != desired[desired.size() - 1 - i] && size != 1) return false;
  }
  return true;
}

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

// PyTorch's InputBuffer::accumulate: add in place when this buffer holds the only reference.
bool can_accumulate_inplace(const Tensor& v) {
  return v.is_non_overlapping_and_dense() && !v.subclass() && v.use_count() == 1 && v.impl()->has_storage() &&
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

struct GraphTask {
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, variable_list> buffers;
  std::vector<std::shared_ptr<Node>> keep_alive;
  std::priority_queue<Node*, std::vector<Node*>, LaterNodeFirst> ready;

  void count_dependencies(const std::shared_ptr<Node>& root) {
    std::vector<Node*> stack{root.get()};
    std::unordered_map<Node*, bool> seen{{root.get(), true}};
    keep_alive.push_back(root);
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      for (const Edge& e : node->next_edges()) {
        if (!e.valid()) continue;
        ++dependencies[e.function.get()];
        if (!seen[e.function.get()]) {
          seen[e.function.get()] = true;
          keep_alive.push_back(e.function);
          stack.push_back(e.function.get());
        }
      }
    }
  }

  void deliver(const Edge& edge, Tensor&& grad) {
    Node* next = edge.function.get();
    variable_list& buffer = buffers[next];
    if (buffer.empty()) buffer.resize(next->num_inputs());
    accumulate_input(buffer, edge.input_nr, std::move(grad));
    if (--dependencies[next] == 0) ready.push(next);
  }
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

  GraphTask task;
  std::shared_ptr<Node> graph_root;
  if (root_edges.size() == 1) {  // start at the root's own node, as PyTorch does for a single root
    graph_root = root_edges[0].function;
    task.count_dependencies(graph_root);
    task.buffers[graph_root.get()].resize(graph_root->num_inputs());
    accumulate_input(task.buffers[graph_root.get()], root_edges[0].input_nr, std::move(grads[0]));
  } else {
    graph_root = std::make_shared<GraphRoot>(root_edges, std::move(grads));
    task.count_dependencies(graph_root);
    task.buffers[graph_root.get()];
  }
  task.ready.push(graph_root.get());

  while (!task.ready.empty()) {
    Node* node = task.ready.top();
    task.ready.pop();
    variable_list inputs = std::move(task.buffers[node]);
    task.buffers.erase(node);
    variable_list outputs = node->apply(std::move(inputs));
    if (!keep_graph) node->release_variables();
    validate_outputs(node->next_edges(), outputs, node->name());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Edge& edge = node->next_edge(i);
      if (edge.valid()) task.deliver(edge, std::move(outputs[i]));
    }
  }
}

}  // namespace strata::autograd
