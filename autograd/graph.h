// autograd/graph.h: what a hook may ask of the backward pass running on its thread (PyTorch's
// torch._C._current_graph_task_id, _will_engine_execute_node, Engine::queue_callback) and
// torch.autograd.graph.register_multi_grad_hook, one hook over several tensors' gradients. The engine
// side is in engine.cpp (Note [The pass a thread is running]), the multi-grad hook in graph.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "node.h"
#include "../core/tensor_hooks.h"

namespace strata::autograd {

// The id of the backward pass running on this thread, -1 outside one.
std::int64_t current_graph_task_id();
// PyTorch's torch._C._current_autograd_node(): the node this thread's pass is evaluating (running it,
// its hooks, and handing its gradients on), or null outside a pass and in its final callbacks.
const Node* current_autograd_node();
// Whether `node` is in the current pass's graph and will run in it (or give up a captured gradient).
// An error outside a backward pass.
bool will_engine_execute_node(const Node& node);
// Runs `callback` once the current pass has run every node (not if the pass fails). An error outside
// a backward pass.
void queue_callback(std::function<void()> callback);

// Note [A multi-grad hook]
// register_multi_grad_hook(tensors, fn, mode) as upstream's: a gradient hook on each tensor, sharing
// one state. In mode All, fn gets one gradient per tensor once every tensor whose gradient the pass
// computes has it (the count is taken when the first arrives, from will_engine_execute_node of each
// tensor's grad_fn or leaf accumulator; undefined where none came); every tensor must require grad.
// In mode Any, fn gets the first gradient to arrive (a span of one), once per pass; tensors that do
// not require grad are skipped. Each pass has its own count, dropped when fn ran or the pass ended.
// The state holds no tensor and no node, only which ones are alive: the hooks live on the grad_fns
// (a leaf's on the leaf), so a graph dropped without a backward frees them, and no cycle is made.
enum class MultiGradMode { All, Any };
using MultiGradHook = std::function<void(std::span<const Tensor> grads)>;

// Upstream's _MultiHandle: removes every per-tensor hook at once.
class MultiGradHandle {
 public:
  MultiGradHandle() = default;
  void remove();
  // Every hook is gone: removed, or its tensor's node or leaf died.
  bool expired() const { return state_.expired(); }

 private:
  friend MultiGradHandle register_multi_grad_hook(std::span<const Tensor>, MultiGradHook, MultiGradMode);
  std::vector<RemovableHandle> handles_;
  std::weak_ptr<const void> state_;
};

MultiGradHandle register_multi_grad_hook(std::span<const Tensor> tensors, MultiGradHook fn,
                                         MultiGradMode mode = MultiGradMode::All);

}  // namespace strata::autograd
