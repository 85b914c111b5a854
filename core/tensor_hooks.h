// core/tensor_hooks.h: hook lists and the handle that removes a hook (PyTorch's RemovableHandle), and
// the hooks a tensor keeps in its AutogradMeta: a leaf's gradient hooks and post-accumulate-grad hooks
// (PyTorch's AutogradMeta::hooks_ and post_acc_grad_hooks_) and a non-leaf's retain_grad() slot. A
// non-leaf's gradient hooks live on its grad_fn (autograd/hooks.h), as PyTorch's do.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "tensor.h"

namespace strata {

struct AutogradMeta;

class HookListBase {
 public:
  virtual ~HookListBase() = default;
  virtual void remove(std::uint64_t id) = 0;
};

// Note [Hooks may change their list while it runs]
// A hook may remove itself or another hook, or register a new one, while its list runs (PyTorch's
// C++ hooks allow the first; Python dicts the same through their handles). So a run visits the
// entries that existed when it started, by index, calls a copy of each function, and skips removed
// ones; removal clears the entry instead of erasing it, and tombstones are swept by the next
// registration made while no run is in progress. Backward passes on several threads may run one
// list at once (hooks on a shared leaf), so the count of runs in progress is atomic; registering or
// removing a hook while another thread runs the list is the caller's race, as in PyTorch.
template <typename F>
class HookList final : public HookListBase {
 public:
  std::uint64_t add(F fn) {
    if (running_.load(std::memory_order_acquire) == 0) std::erase_if(entries_, [](const Entry& e) { return !e.fn; });
    entries_.push_back(Entry{next_id_, std::move(fn)});
    return next_id_++;
  }
  void remove(std::uint64_t id) override {
    for (Entry& e : entries_)
      if (e.id == id) e.fn = nullptr;
  }
  bool empty() const {
    for (const Entry& e : entries_)
      if (e.fn) return false;
    return true;
  }
  // Calls visit(fn, k) for each live hook in registration order; k counts every hook ever in the list
  // up to this one, so errors name a hook as PyTorch's C++ hooks do (by its index).
  template <typename Visit>
  void for_each(Visit&& visit) {
    running_.fetch_add(1, std::memory_order_relaxed);
    struct Done {
      std::atomic<std::uint32_t>& running;
      ~Done() { running.fetch_sub(1, std::memory_order_release); }
    } done{running_};
    const std::size_t n = entries_.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (!entries_[i].fn) continue;
      const F fn = entries_[i].fn;  // the entry may move if the hook registers another
      visit(fn, entries_[i].id);
    }
  }

 private:
  struct Entry {
    std::uint64_t id;
    F fn;
  };
  std::vector<Entry> entries_;
  std::uint64_t next_id_ = 0;
  std::atomic<std::uint32_t> running_{0};
};

// What register_hook returns: remove() takes the hook out (PyTorch's RemovableHandle). Removing twice,
// or after the list died with its tensor or node, does nothing.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<HookListBase> list, std::uint64_t id) : list_(std::move(list)), id_(id) {}
  void remove() {
    if (const std::shared_ptr<HookListBase> list = list_.lock()) list->remove(id_);
    list_.reset();
  }

 private:
  std::weak_ptr<HookListBase> list_;
  std::uint64_t id_ = 0;
};

// A gradient hook: gets the gradient (undefined when none arrived), returns its replacement or an
// undefined Tensor to leave it unchanged (PyTorch's register_hook).
using GradHook = std::function<Tensor(const Tensor& grad)>;
// A post-accumulate-grad hook: gets the leaf, whose .grad has just been accumulated.
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

// Where a retain_grad() hook writes: the tensor's meta while the tensor lives, null after. The hook
// holds this, not the tensor (PyTorch's hook holds a weak reference), and writes under its lock, which
// the tensor's death also takes.
struct RetainedGradSlot {
  std::mutex mutex;
  AutogradMeta* meta = nullptr;
};

struct TensorHooks {
  TensorHooks() = default;
  TensorHooks(const TensorHooks&) = delete;
  TensorHooks& operator=(const TensorHooks&) = delete;
  ~TensorHooks() {
    if (retained) {
      const std::lock_guard<std::mutex> lock(retained->mutex);
      retained->meta = nullptr;
    }
  }
  std::shared_ptr<HookList<GradHook>> pre;                                 // a leaf's gradient hooks
  std::shared_ptr<HookList<PostAccumulateGradHook>> post_accumulate_grad;  // a leaf's
  std::shared_ptr<RetainedGradSlot> retained;                              // set by retain_grad() on a non-leaf
};

}  // namespace strata
