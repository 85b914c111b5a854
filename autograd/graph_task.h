// autograd/graph_task.h: GraphTask, one backward pass's view of its graph: the nodes it reaches, the
// gradients each still waits for, their input buffers, the ready queue, and what autograd::grad
// captures. Internal to the engine (autograd/engine.cpp), which runs the pass; all inline, as the
// pass's loop calls it for every node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "../core/interpose/interposer.h"
#include "../core/util/small_vector.h"
#include "../ops/functions.h"
#include "grad_mode.h"
#include "node.h"
#include "node_index.h"

namespace strata::autograd {

// PyTorch's InputBuffer::accumulate: add in place when this buffer holds the only reference to a
// plain dense tensor; out of place otherwise (so a mode sees aten.add.Tensor, as in PyTorch).
inline bool can_accumulate_inplace(const Tensor& v) {
  return !is_tensor_subclass_like(v) && v.is_non_overlapping_and_dense() && v.use_count() == 1 && v.impl()->has_data() &&
         v.impl()->storage().use_count() == 1;
}

inline void accumulate_into_defined(Tensor& old, Tensor&& grad) {
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
// captured gradients and stops; a task that is neither is never queued. backward(inputs=...) marks
// its inputs' nodes to run instead of capturing them (PyTorch's needed_ for accumulate_grad), so
// only they accumulate. A node that runs computes only the gradients of the inputs whose edges lead
// to a task that runs or is captured (Node::task_should_compute_output, PyTorch's): grad(x * y, {x})
// runs one mul, not two. backward() without inputs marks nothing, and its pass skips all of this.
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
      if (next < 0 || !should_execute(next)) continue;  // a task that never runs gets nothing (PyTorch's too)
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
  // Marks the node `edge` leads to as one that must run (backward(inputs=...)).
  void add_needed(const Edge& edge) {
    const std::int32_t task = index_.find(edge.function.get());
    if (task >= 0) needed_.push_back(task);
  }
  // Whether this pass runs only part of its graph (autograd::grad, backward(inputs=...)).
  bool prunes() const { return !exec_.empty(); }
  // Marks the tasks that must run: those with a path to a captured task (a depth-first walk from the
  // root that decides each task once all the tasks below it are decided).
  void init_to_execute() {
    exec_.assign(tasks_.size(), kSkip);
    for (const Capture& c : captures_) exec_[static_cast<std::size_t>(c.task)] = kCapture;
    for (const std::int32_t t : needed_) exec_[static_cast<std::size_t>(t)] |= kRun;
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
    if (t < 0) return std::find(extra_needed_.begin(), extra_needed_.end(), n) != extra_needed_.end();
    return should_execute(t);
  }
  // PyTorch's add_node_to_current_graph_task_exec_info: `n`, outside the pass's graph, counts as
  // needed (CopySlices' inner node's edge 0 stands for CopySlices' own).
  void add_extra_needed(const Node* n) { extra_needed_.push_back(n); }
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
  std::vector<std::int32_t> needed_;        // tasks backward(inputs=...) must run
  std::vector<const Node*> extra_needed_;   // add_extra_needed
  std::vector<std::uint8_t> exec_;  // per task, kSkip / kCapture | kRun; empty for backward()
};

}  // namespace strata::autograd
