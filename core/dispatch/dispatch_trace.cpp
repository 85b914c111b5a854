// core/dispatch/dispatch_trace.cpp: the trace switch's state (Note [Tracing is per thread]). Printing happens
// in dispatcher.cpp.
#include "core/dispatch/dispatch_trace.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "core/dtype.h"
#include "core/dispatch/ivalue.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace strata {
namespace {
constinit thread_local std::ostream* tls_dispatch_trace = nullptr;  // this thread's own stream
constinit thread_local int tls_dispatch_trace_depth = 0;
std::atomic<std::ostream*> default_dispatch_trace{nullptr};
}  // namespace

namespace detail {
std::atomic<int> dispatch_trace_users{0};

void apply_dispatch_trace_environment(const char* value) {
  std::ostream* out = value && *value && std::strcmp(value, "0") != 0 ? &std::cerr : nullptr;
  std::ostream* was = default_dispatch_trace.exchange(out, std::memory_order_relaxed);
  if ((was != nullptr) != (out != nullptr)) dispatch_trace_users.fetch_add(out ? 1 : -1, std::memory_order_relaxed);
}
}  // namespace detail

namespace {
// STRATA_DISPATCH_TRACE is read once, when the library is loaded, so the first op is traced too.
[[maybe_unused]] const bool environment_applied = [] {
  detail::apply_dispatch_trace_environment(std::getenv("STRATA_DISPATCH_TRACE"));
  return true;
}();
}  // namespace

// A thread counts as a user while it has a stream of its own: the count changes only when that
// starts or stops, so nested guards and repeated calls leave it balanced.
void set_dispatch_trace(std::ostream* out) {
  std::ostream*& mine = tls_dispatch_trace;
  if ((mine != nullptr) != (out != nullptr)) detail::dispatch_trace_users.fetch_add(out ? 1 : -1, std::memory_order_relaxed);
  mine = out;
}

std::ostream* dispatch_trace_stream() {
  std::ostream* mine = tls_dispatch_trace;
  return mine ? mine : default_dispatch_trace.load(std::memory_order_relaxed);
}

std::string describe_tensor_arguments(std::span<const IValue> values, const std::function<bool(std::size_t)>& tensor_typed) {
  std::string out = "(";
  auto add = [&](std::string_view text) {
    if (out.size() > 1) out += ", ";
    out += text;
  };
  auto add_tensor = [&](const Tensor& t) {
    add(t.defined() ? detail::str_cat(dtype_shorthand(t.dtype()), shape_str(t.sizes())) : std::string("None"));
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    const IValue& v = values[i];
    if (v.is_tensor()) {
      add_tensor(v.to_tensor());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) add_tensor(t);
    } else if (v.is_none() && tensor_typed && tensor_typed(i)) {
      add("None");
    }
  }
  return out + ")";
}

int& detail::dispatch_trace_depth() { return tls_dispatch_trace_depth; }

void dispatch_trace_note(std::string_view text) {
  if (!dispatch_trace_in_use()) return;
  std::ostream* out = dispatch_trace_stream();
  if (!out) return;
  // One write per line, so lines from threads sharing the default stream (stderr) stay whole.
  std::string line(static_cast<std::size_t>(2 * tls_dispatch_trace_depth), ' ');
  line.append(text).push_back('\n');
  out->write(line.data(), static_cast<std::streamsize>(line.size()));
}

DispatchTraceGuard::DispatchTraceGuard(std::ostream& out) : saved_(tls_dispatch_trace) { set_dispatch_trace(&out); }
DispatchTraceGuard::~DispatchTraceGuard() { set_dispatch_trace(saved_); }

}  // namespace strata
