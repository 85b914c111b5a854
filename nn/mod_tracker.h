// nn/mod_tracker.h: PyTorch's torch.distributed._tools.mod_tracker.ModTracker, forward only: while
// entered it knows which modules are running, by fully qualified name ("Sequential",
// "Sequential.0"), and calls user hooks on entering and leaving each one. DebugMode's [nn.Mod] lines
// and FlopCounterMode's per-module totals are built on it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "nn/module_hooks.h"

namespace strata::nn {

// Note [Module names of a tracker]
// As upstream's _get_mod_name: a module the tracker has not named is named by its type
// ("Sequential"); the first time a module is seen, its children are named "<its name>.<child name>"
// recursively ("Sequential.0", "Sequential.1.0"), replacing a name a child got when it was called on
// its own before, and a child called on its own later keeps its qualified name. Names stay with the
// tracker (a module reached through two parents is named by the last parent seen first). The
// tracker keys modules by address: it must not outlive a module it named while another module could
// be created at that address (upstream uses weak references; enter a tracker for a scope).
class ModTracker {
 public:
  using PreHook = std::function<void(Module& module, const Tensor& input)>;
  using PostHook = std::function<void(Module& module, const Tensor& input, const Tensor& output)>;

  ModTracker() = default;
  ~ModTracker() { exit(); }
  ModTracker(const ModTracker&) = delete;
  ModTracker& operator=(const ModTracker&) = delete;

  // `with tracker:` registers the global hooks (the post hook always_call), exit() removes them.
  void enter();
  void exit();

  // The fully qualified names of the modules whose forward is running, and "Global" (never empty).
  std::set<std::string> parents() const;
  // The name this tracker gives `module` (naming it and its children on first sight).
  const std::string& fqn(const Module& module);
  // The name if this tracker has named `module`, else null.
  const std::string* known_fqn(const Module& module) const;

  // upstream's register_user_hooks for the forward: called after `module` is added to parents() and
  // before it is removed (the post hook also when the call throws, with an undefined output). One
  // of each at a time: registering a second is an error; clear_user_hooks() drops them.
  void register_user_hooks(PreHook pre_fw_hook, PostHook post_fw_hook);
  void clear_user_hooks();

 private:
  void pre_forward(Module& module, const Tensor& input);
  void post_forward(Module& module, const Tensor& input, const Tensor& output);

  std::unordered_map<const Module*, std::string> known_;
  std::unordered_set<const Module*> seen_;
  std::map<std::string, int> active_;  // name -> how many calls of it are running
  PreHook user_pre_;
  PostHook user_post_;
  RemovableHandle pre_handle_, post_handle_;
  bool entered_ = false;
};

}  // namespace strata::nn
