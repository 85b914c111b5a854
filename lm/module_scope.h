// lm/module_scope.h: the decoder's module structure, as llama2.c's model.py names it (Transformer,
// tok_embeddings, layers.N with attention_norm, attention, ffn_norm and feed_forward, norm, output),
// marked by scopes in lm::Model's forward, so that strata's tools (DebugMode's `[nn.Mod]` lines,
// FlopCounterMode's per-module counts, the profiler's scopes) can see the model's parts. A scope costs
// one thread-local test unless a ModuleScopeObserver is installed on the thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <strata/core/util/non_copyable.h>

namespace lm {

// Note [The model's modules are scopes, not nn::Modules]
// strata's tools learn about modules from nn::Module calls (global forward hooks, ModTracker). The
// decoder is not made of nn::Modules: its parts take several arguments (positions, the mask, the KV
// cache) and update the residual stream in place, where a Module maps one tensor to one tensor, and
// its weights are a checkpoint's mapping, not parameters. So the forward marks its parts with
// ModuleScope, and an observer (lm/scope_tools.h) hands each scope to the tools through their
// by-hand entry points: DebugMode::record_module_call, FlopCounterMode::enter_module, a profiler
// record_function. A scope's name is its fully qualified name, parent first, as ModTracker would
// give it ("Transformer.layers.0.attention"); the names are model.py's, whose weights lm reads.

// What sees the scopes on this thread. enter may throw (the scope then stays closed); exit must not.
class ModuleScopeObserver {
 public:
  virtual ~ModuleScopeObserver() = default;
  virtual void enter(const std::string& fqn) = 0;
  virtual void exit(const std::string& fqn) noexcept = 0;
};

// Installs `observer` on this thread for the guard's lifetime; one at a time (a second is an error).
class ObserveModuleScopes : strata::NonCopyable {
 public:
  explicit ObserveModuleScopes(ModuleScopeObserver& observer);
  ~ObserveModuleScopes();
};

// One module call, open from construction to close() or destruction, nested in the scope open
// around it on this thread.
class ModuleScope : strata::NonCopyable {
 public:
  explicit ModuleScope(std::string_view name) { open(name, -1); }
  ModuleScope(std::string_view name, std::int64_t index) { open(name, index); }  // "layers.3"
  ~ModuleScope() { close(); }
  // Closes this scope and opens its sibling `name` (a block's next part). This must be the innermost
  // open scope.
  void next(std::string_view name) {
    close();
    open(name, -1);
  }
  void close() noexcept {
    if (open_) close_open();
  }

 private:
  void open(std::string_view name, std::int64_t index) {
    if (observed()) [[unlikely]] open_observed(name, index);
  }
  static bool observed();
  void open_observed(std::string_view name, std::int64_t index);
  void close_open() noexcept;
  bool open_ = false;
};

}  // namespace lm
