// nn/mod_tracker.h: PyTorch's torch.distributed._tools.mod_tracker.ModTracker: while entered it knows
// which modules are running, by fully qualified name ("Sequential", "Sequential.0"), in the forward
// and, through gradient hooks on their outputs and inputs, in the backward; it calls user hooks on
// entering and leaving each one. DebugMode's [nn.Mod] lines and FlopCounterMode's per-module totals
// are built on it.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "../core/util/non_copyable.h"
#include "module_hooks.h"

namespace strata::nn {

// Note [Module names of a tracker]
// As upstream's _get_mod_name: a module the tracker has not named is named by its type
// ("Sequential"); the first time a module is seen, its children are named "<its name>.<child name>"
// recursively ("Sequential.0", "Sequential.1.0"), replacing a name a child got when it was called on
// its own before, and a child called on its own later keeps its qualified name. Names stay with the
// tracker (a module reached through two parents is named by the last parent seen first). The
// tracker keys modules by address: it must not outlive a module it named while another module could
// be created at that address (upstream uses weak references; enter a tracker for a scope).
//
// Note [A module's backward]
// As upstream's ModTracker, while the tracker is entered and no backward pass runs on the thread: a
// module's forward returning an output that requires grad registers a multi-grad hook (mode Any) on
// it that enters the module when the output's gradient arrives; its pre-forward registers one (mode
// All) on its input that leaves the module once the input's gradient is computed, or, when the input
// needs no gradient, queues the leaving for the end of the next backward pass. The first module
// entered in a pass queues, for the pass's end, those leavings (last queued first) and then a reset
// of parents() to {"Global"}. So in backward, parents() holds a module from the moment its output's
// gradient arrives until its input's is computed: the backward ops of a Linear run under it and its
// parents. A module whose forward throws, or returns an output that needs no gradient (so no
// backward enters it), takes back what its pre-forward registered (upstream keeps it: after a no-grad
// forward an unrelated backward would leave those modules and call post_bw_hook for them). A pass
// that fails drops its queued callbacks; the next pass queues its own. exit() removes every hook the
// tracker registered (none stays on a graph that is kept) and drops queued leavings. The hooks and
// callbacks share the tracker's state, not the tracker. One thread at a time: forward hooks and
// backward hooks of one tracker must not run concurrently.
class ModTracker : NonCopyable {
 public:
  using PreHook = std::function<void(Module& module, const Tensor& input)>;
  using PostHook = std::function<void(Module& module, const Tensor& input, const Tensor& output)>;
  // Upstream's pre_bw_hook(module, grad_output) and post_bw_hook(module, grad_input). strata passes
  // the module's name: in backward the tracker cannot tell whether the module is still alive (upstream
  // passes None then). The leavings queued for a pass's end get no gradients.
  using BwHook = std::function<void(const std::string& fqn, std::span<const Tensor> grads)>;

  ModTracker();
  ~ModTracker() { exit(); }

  // `with tracker:` registers the global hooks (the post hook always_call), exit() removes them and
  // every gradient hook the tracker registered.
  void enter();
  void exit();

  // The fully qualified names of the modules whose forward or backward is running, and "Global"
  // (never empty).
  std::set<std::string> parents() const;
  // Whether a backward pass runs on this thread (upstream's is_bw).
  static bool is_bw();
  // The name this tracker gives `module` (naming it and its children on first sight).
  const std::string& fqn(const Module& module);
  // The name if this tracker has named `module`, else null (upstream's get_known_fqn).
  const std::string* known_fqn(const Module& module) const;

  // upstream's register_user_hooks: the forward hooks are called after `module` is added to parents()
  // and before it is removed (the post hook also when the call throws, with an undefined output); the
  // backward ones likewise, after the module is entered and before it is left. One of each at a
  // time: registering a second is an error; clear_user_hooks() drops them.
  void register_user_hooks(PreHook pre_fw_hook, PostHook post_fw_hook, BwHook pre_bw_hook = nullptr,
                           BwHook post_bw_hook = nullptr);
  void clear_user_hooks();

  struct State;  // mod_tracker.cpp's: shared with the gradient hooks and callbacks the tracker registers

 private:
  std::shared_ptr<State> state_;
  RemovableHandle pre_handle_, post_handle_;
  bool entered_ = false;
};

}  // namespace strata::nn
