// nn/module_hooks.cpp: the global hook registry and the hooked module call (Note [Global module hooks]).
#include "nn/module_hooks.h"

#include <memory>
#include <mutex>
#include <vector>

#include "core/util/warning.h"
#include "nn/module.h"

namespace strata::nn {

namespace detail {
std::atomic<int> module_hook_count{0};
}

namespace {

struct PreEntry {
  std::uint64_t id;
  std::shared_ptr<const ForwardPreHook> hook;
};
struct PostEntry {
  std::uint64_t id;
  std::shared_ptr<const ForwardHook> hook;
  bool always_call;
};

struct Registry {
  std::mutex mutex;
  std::uint64_t next_id = 1;
  std::vector<PreEntry> pre;
  std::vector<PostEntry> post;
};

Registry& registry() {
  static Registry r;
  return r;
}

void update_count(Registry& r) {
  detail::module_hook_count.store(static_cast<int>(r.pre.size() + r.post.size()), std::memory_order_relaxed);
}

}  // namespace

RemovableHandle register_module_forward_pre_hook(ForwardPreHook hook) {
  STRATA_CHECK(hook, "register_module_forward_pre_hook: the hook is empty");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const std::uint64_t id = r.next_id++;
  r.pre.push_back({id, std::make_shared<const ForwardPreHook>(std::move(hook))});
  update_count(r);
  return RemovableHandle(id);
}

RemovableHandle register_module_forward_hook(ForwardHook hook, bool always_call) {
  STRATA_CHECK(hook, "register_module_forward_hook: the hook is empty");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const std::uint64_t id = r.next_id++;
  r.post.push_back({id, std::make_shared<const ForwardHook>(std::move(hook)), always_call});
  update_count(r);
  return RemovableHandle(id);
}

void RemovableHandle::remove() {
  if (id_ == 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.pre, [&](const PreEntry& e) { return e.id == id_; });
  std::erase_if(r.post, [&](const PostEntry& e) { return e.id == id_; });
  update_count(r);
  id_ = 0;
}

namespace detail {

Tensor call_module_with_hooks(Module& module, const Tensor& input) {
  std::vector<PreEntry> pre;
  std::vector<PostEntry> post;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    pre = r.pre;
    post = r.post;
  }
  if (const ModuleOwnHooks* own = module.own_hooks()) {  // after the global ones, as in PyTorch
    for (const auto& hook : own->pre) pre.push_back({0, hook});
    for (const auto& hook : own->post) post.push_back({0, hook, false});
  }
  Tensor in = input;
  Tensor out;
  bool in_post = false;       // forward returned; the forward hooks are running
  std::size_t post_done = 0;  // the forward hooks that returned
  try {
    for (const PreEntry& e : pre)
      if (std::optional<Tensor> replaced = (*e.hook)(module, in)) in = std::move(*replaced);
    out = module.forward(in);
    in_post = true;
    for (; post_done < post.size(); ++post_done) {
      const PostEntry& e = post[post_done];
      if (std::optional<Tensor> replaced = (*e.hook)(module, in, out)) out = std::move(*replaced);
    }
  } catch (...) {
    // A forward hook that threw has run; the always_call hooks after it have not.
    for (std::size_t i = in_post ? post_done + 1 : 0; i < post.size(); ++i) {
      if (!post[i].always_call) continue;
      try {
        (void)(*post[i].hook)(module, in, Tensor());
      } catch (const std::exception& e) {
        STRATA_WARN("global module forward hook with ``always_call=True`` raised an exception that was silenced as "
                    "another error was raised in forward: ", e.what());
      }
    }
    throw;
  }
  return out;
}

}  // namespace detail

}  // namespace strata::nn
