// autograd/graph.cpp: register_multi_grad_hook (Note [A multi-grad hook]).
#include "autograd/graph.h"

#include <algorithm>
#include <mutex>

#include "autograd/accumulate_grad.h"
#include "autograd/hooks.h"
#include "core/autograd_meta.h"

namespace strata::autograd {

namespace {

// One tensor of the hook: its grad_fn, or its meta for a leaf (whose accumulator may come and go),
// valid while `alive` is: the token its gradient hook holds, which dies with the hook.
struct Tracked {
  const Node* grad_fn;
  AutogradMeta* leaf;
  std::weak_ptr<const void> alive;
};

// What one backward pass has seen so far.
struct PassRecord {
  std::int64_t id;
  std::size_t arrived = 0;
  std::size_t expected = 0;
  std::vector<Tensor> grads;  // mode All: one per tensor
};

struct MultiGradState {
  MultiGradState(MultiGradHook f, MultiGradMode m) : fn(std::move(f)), mode(m) {}
  const MultiGradHook fn;
  const MultiGradMode mode;
  std::mutex mutex;
  std::vector<Tracked> tensors;
  std::vector<PassRecord> passes;
};

bool will_execute(const Tracked& t) {
  const std::shared_ptr<const void> alive = t.alive.lock();
  if (!alive) return false;
  if (t.grad_fn) return will_engine_execute_node(*t.grad_fn);
  const NodePtr accumulator = try_get_grad_accumulator(*t.leaf);
  return accumulator && will_engine_execute_node(*accumulator);
}

// The record of the current pass, made (with a callback dropping it at the pass's end) on first use.
PassRecord& record_of(const std::shared_ptr<MultiGradState>& state, std::int64_t id) {
  auto it = std::find_if(state->passes.begin(), state->passes.end(), [&](const PassRecord& r) { return r.id == id; });
  if (it != state->passes.end()) return *it;
  PassRecord record{id};
  if (state->mode == MultiGradMode::All) {
    for (const Tracked& t : state->tensors) record.expected += will_execute(t) ? 1 : 0;
    record.grads.resize(state->tensors.size());
  }
  queue_callback([weak = std::weak_ptr<MultiGradState>(state), id] {
    if (const std::shared_ptr<MultiGradState> s = weak.lock()) {
      const std::lock_guard<std::mutex> lock(s->mutex);
      std::erase_if(s->passes, [&](const PassRecord& r) { return r.id == id; });
    }
  });
  state->passes.push_back(std::move(record));
  return state->passes.back();
}

void on_gradient(const std::shared_ptr<MultiGradState>& state, std::size_t index, const Tensor& grad) {
  const std::int64_t id = current_graph_task_id();
  STRATA_CHECK(id != -1, "expected this hook to be called inside a backward call");
  std::unique_lock<std::mutex> lock(state->mutex);
  PassRecord& record = record_of(state, id);
  if (state->mode == MultiGradMode::Any) {
    if (record.arrived++ != 0) return;
    lock.unlock();
    state->fn(std::span<const Tensor>(&grad, 1));
    return;
  }
  record.grads[index] = grad;
  if (++record.arrived != record.expected) return;
  const std::vector<Tensor> grads = std::move(record.grads);
  std::erase_if(state->passes, [&](const PassRecord& r) { return r.id == id; });
  lock.unlock();
  state->fn(grads);
}

}  // namespace

void MultiGradHandle::remove() {
  for (RemovableHandle& h : handles_) h.remove();
  handles_.clear();
  state_.reset();
}

MultiGradHandle register_multi_grad_hook(std::span<const Tensor> tensors, MultiGradHook fn, MultiGradMode mode) {
  STRATA_CHECK(static_cast<bool>(fn), "register_multi_grad_hook: the hook is empty");
  auto state = std::make_shared<MultiGradState>(std::move(fn), mode);
  MultiGradHandle handle;
  handle.state_ = state;
  try {
    for (const Tensor& t : tensors) {
      if (mode == MultiGradMode::Any && !(t.defined() && t.requires_grad())) continue;
      const std::size_t index = state->tensors.size();
      auto alive = std::make_shared<const char>(0);
      handle.handles_.push_back(register_hook(t, [state, index, alive](const Tensor& grad) {
        on_gradient(state, index, grad);
        return Tensor();
      }));
      Node* grad_fn = t.grad_fn();
      state->tensors.push_back(Tracked{grad_fn, grad_fn ? nullptr : t.impl()->autograd_meta(), alive});
    }
  } catch (...) {
    handle.remove();
    throw;
  }
  return handle;
}

}  // namespace strata::autograd
