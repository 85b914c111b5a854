// nn/module_hooks.h: global forward hooks on every Module call (PyTorch's
// torch.nn.modules.module.register_module_forward_pre_hook / register_module_forward_hook), run by
// Module::operator(). nn/mod_tracker.h builds fully qualified module names on them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "../core/tensor.h"

namespace strata::nn {

class Module;

// hook(module, input) before forward; a returned tensor replaces the input.
using ForwardPreHook = std::function<std::optional<Tensor>(Module& module, const Tensor& input)>;
// hook(module, input, output) after forward; a returned tensor replaces the output. `output` is
// undefined when an always_call hook runs because the call threw.
using ForwardHook = std::function<std::optional<Tensor>(Module& module, const Tensor& input, const Tensor& output)>;

// PyTorch's RemovableHandle: remove() unregisters the hook (idempotent). The handle does not remove
// it when destroyed, as in PyTorch.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  explicit RemovableHandle(std::uint64_t id) : id_(id) {}
  void remove();
  std::uint64_t id() const { return id_; }

 private:
  std::uint64_t id_ = 0;
};

// Note [Global module hooks]
// As PyTorch's _call_impl: on module(input), the global pre-hooks run in registration order, each
// seeing the input the previous one returned; then forward; then the global forward hooks in
// registration order, each seeing the output the previous one returned. The hooks are global (every
// thread, every module); each call runs the ones registered when it started, so a hook may register
// or remove hooks. If anything in the call throws (a pre-hook, forward, a hook), the forward hooks
// registered with always_call=True that have not run yet run with an undefined output (an exception
// one of them throws then is dropped with a warning, as PyTorch's is), and the error propagates.
// So a tracker's post-hook (always_call) closes what its pre-hook opened even when the call fails.
// With no hook registered a module call costs one relaxed atomic load.
RemovableHandle register_module_forward_pre_hook(ForwardPreHook hook);
RemovableHandle register_module_forward_hook(ForwardHook hook, bool always_call = false);

namespace detail {
// A module's own hooks (Module::register_forward_pre_hook / register_forward_hook).
struct ModuleOwnHooks {
  std::vector<std::shared_ptr<const ForwardPreHook>> pre;
  std::vector<std::shared_ptr<const ForwardHook>> post;
};
extern std::atomic<int> module_hook_count;
inline bool module_hooks_registered() { return module_hook_count.load(std::memory_order_relaxed) != 0; }
// Module::operator()'s call when hooks are registered.
Tensor call_module_with_hooks(Module& module, const Tensor& input);
}  // namespace detail

}  // namespace strata::nn
