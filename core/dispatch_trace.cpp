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
  static std::ostream* stream = [] {
    const char* env = std::getenv("STRATA_DISPATCH_TRACE");
    std::ostream* s = (env && *env && std::strcmp(env, "0") != 0) ? &std::cerr : nullptr;
    detail::dispatch_trace_on.store(s != nullptr, std::memory_order_relaxed);
    return s;
  }();
  return stream;
}
}  // namespace

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
