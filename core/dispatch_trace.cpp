// core/dispatch_trace.cpp: the trace switch's state. Printing happens in dispatcher.cpp.
#include "core/dispatch_trace.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace strata {
namespace detail {
std::atomic<bool> dispatch_trace_on{false};
}

namespace {
std::ostream*& trace_stream() {
  static std::ostream* stream = nullptr;
  return stream;
}

// STRATA_DISPATCH_TRACE is read once, when the library is loaded, so the first op is traced too.
[[maybe_unused]] const bool environment_applied = [] {
  detail::apply_dispatch_trace_environment(std::getenv("STRATA_DISPATCH_TRACE"));
  return true;
}();
}  // namespace

void detail::apply_dispatch_trace_environment(const char* value) {
  if (value && *value && std::strcmp(value, "0") != 0) set_dispatch_trace(&std::cerr);
}

void set_dispatch_trace(std::ostream* out) {
  trace_stream() = out;
  detail::dispatch_trace_on.store(out != nullptr, std::memory_order_relaxed);
}

std::ostream* dispatch_trace_stream() { return trace_stream(); }

DispatchTraceGuard::DispatchTraceGuard(std::ostream& out) : saved_(dispatch_trace_stream()) {
  set_dispatch_trace(&out);
}
DispatchTraceGuard::~DispatchTraceGuard() { set_dispatch_trace(saved_); }

}  // namespace strata
