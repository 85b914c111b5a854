// core/dispatch_trace.h: the switch that prints every dispatch step (op, key set, the key that runs,
// and what runs there), indented by nesting. Off by default; on with STRATA_DISPATCH_TRACE=1 (to
// stderr) or set_dispatch_trace(&stream). When off it costs one relaxed load per dispatch.
#pragma once

#include <atomic>
#include <ostream>

namespace strata {

void set_dispatch_trace(std::ostream* out);  // nullptr turns it off
std::ostream* dispatch_trace_stream();

namespace detail {
extern std::atomic<bool> dispatch_trace_on;
// Turns tracing to stderr on when `value` (STRATA_DISPATCH_TRACE's) is set and not "0"; runs once
// when the library loads.
void apply_dispatch_trace_environment(const char* value);
}
inline bool dispatch_trace_enabled() { return detail::dispatch_trace_on.load(std::memory_order_relaxed); }

// Traces into `out` for the guard's lifetime, then restores the previous setting.
class DispatchTraceGuard {
 public:
  explicit DispatchTraceGuard(std::ostream& out);
  ~DispatchTraceGuard();
  DispatchTraceGuard(const DispatchTraceGuard&) = delete;
  DispatchTraceGuard& operator=(const DispatchTraceGuard&) = delete;

 private:
  std::ostream* saved_;
};

}  // namespace strata
