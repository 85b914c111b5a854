// tracer/cli/explain.cpp: the --explain view (a dispatch trace, a function mode and module hooks).
#include "tracer/cli/explain.h"

#include <optional>
#include <sstream>

#include "core/dispatch/dispatch_trace.h"
#include "core/interpose/function_mode.h"
#include "core/util/non_copyable.h"
#include "nn/mod_tracker.h"

namespace strata::tracer {

namespace {
// Lines written while it lives are indented one level deeper.
class TraceIndent : NonCopyable {
 public:
  TraceIndent() { ++detail::dispatch_trace_depth(); }
  ~TraceIndent() { --detail::dispatch_trace_depth(); }
};

// Writes each call a function mode sees as a trace line, and what it ran below it.
class ExplainFunctions final : public FunctionMode {
 public:
  std::string_view name() const override { return "explain"; }
  void torch_function(FunctionCall& call) override {
    dispatch_trace_note(strata::detail::str_cat(call.name(), describe_tensor_arguments(call.args())));
    const TraceIndent indent;
    call.call_through();
  }
};
}  // namespace

std::string explain_step(const MlpConfig& config) {
  std::ostringstream trace;
  std::optional<DispatchTraceGuard> guard;
  ExplainFunctions functions;
  std::optional<FunctionModeGuard> function_guard;
  nn::ModTracker modules;
  modules.register_user_hooks(
      [&](nn::Module& m, const Tensor&) {
        dispatch_trace_note("[module] " + modules.fqn(m));
        ++detail::dispatch_trace_depth();
      },
      [&](nn::Module&, const Tensor&, const Tensor&) { --detail::dispatch_trace_depth(); });
  const PhasedMode phases{nullptr,
                          [&](const std::string& phase) {
                            if (!guard) {
                              guard.emplace(trace);
                              function_guard.emplace(functions);
                              modules.enter();
                            }
                            dispatch_trace_note("# " + phase);
                          },
                          [&] {
                            modules.exit();
                            function_guard.reset();
                            guard.reset();
                          }};
  run_step(config, phases);
  return trace.str();
}

}  // namespace strata::tracer
