// lm/scope_tools.h: hands the model's module scopes (lm/module_scope.h) to strata's tools while it is
// installed on the thread: a DebugMode records `[nn.Mod] Transformer.layers.0.attention`, a
// FlopCounterMode counts the module's FLOPs for it and its parents, and a running profiler gets a
// record_function scope of the module's name (a user_annotation event of the Chrome trace).
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <strata/modes/debug_mode.h>
#include <strata/modes/flop_counter.h>
#include <strata/modes/profiler.h>

#include "module_scope.h"

namespace lm {

struct ScopeToolsOptions {
  strata::tracer::DebugMode* debug_mode = nullptr;       // entered by the caller (DebugMode::Guard)
  strata::tracer::FlopCounterMode* flop_counter = nullptr;  // entered by the caller (its Guard)
  bool profiler_scopes = false;                          // record_function scopes (a Profiler runs)
};

class ScopeTools final : public ModuleScopeObserver {
 public:
  explicit ScopeTools(ScopeToolsOptions options) : options_(options), observe_(*this) {}
  ~ScopeTools() override;

  void enter(const std::string& fqn) override;
  void exit(const std::string& fqn) noexcept override;

  // Every module entered, in order of first entry (Transformer first).
  const std::vector<std::string>& modules() const { return modules_; }
  // Rethrows the first error a scope's closing raised (exit cannot throw): call after the run.
  void check() const;

 private:
  ScopeToolsOptions options_;
  std::vector<std::string> modules_;
  std::vector<strata::tracer::DebugMode::CallScope> debug_scopes_;
  std::vector<std::unique_ptr<strata::profiler::record_function>> profiler_scopes_;
  std::exception_ptr error_;
  ObserveModuleScopes observe_;  // last: installed once the rest is built, removed first
};

}  // namespace lm
