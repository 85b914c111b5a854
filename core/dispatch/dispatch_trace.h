// core/dispatch/dispatch_trace.h: the switch that prints every dispatch step (op, key set, the key that runs,
// and what runs there), indented by nesting. Per thread, as the mode stack is: a thread traces into
// its own stream (set_dispatch_trace, DispatchTraceGuard), else into the process default that
// STRATA_DISPATCH_TRACE=1 sets (stderr), else not at all. See Note [Tracing is per thread].
#pragma once

#include <atomic>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "../util/non_copyable.h"

namespace strata {

// Note [Tracing is per thread]
// A thread's trace stream is its own: tracing on one thread never sees another thread's ops, and
// a guard on one thread cannot leave another writing into a stream that went out of scope.
//  - set_dispatch_trace(&out) / DispatchTraceGuard(out): this thread traces into `out`, whatever the
//    default. set_dispatch_trace(nullptr) drops this thread's own stream, so it follows the default.
//  - The process default is null, or std::cerr when STRATA_DISPATCH_TRACE is set (and not "0") as the
//    library loads: then every thread without a stream of its own traces to stderr, one write per
//    line (lines of different threads do not interleave within a line).
// The dispatcher tests on every dispatch, and the fast path on every call, whether to take the
// tracing path; that stays one relaxed load of a process-wide count of streams in use (each
// thread's own, plus the default): dispatch_trace_in_use(). While some thread traces, the others
// take the slow path, which asks dispatch_trace_stream() and finds nothing to print. (A thread
// that ends with a stream of its own set still counts: the others stay on the slow path, never
// print.)
void set_dispatch_trace(std::ostream* out);  // this thread's own stream; nullptr: follow the default
std::ostream* dispatch_trace_stream();       // where this thread traces now (null: it does not)

namespace detail {
extern std::atomic<int> dispatch_trace_users;  // threads with a stream of their own, plus 1 for the default
// Sets the default to stderr when `value` (STRATA_DISPATCH_TRACE's) is set and not "0", else to
// none; runs once when the library loads.
void apply_dispatch_trace_environment(const char* value);
}  // namespace detail

// Whether any thread may be tracing: the dispatcher's cheap test (Note [Tracing is per thread]).
inline bool dispatch_trace_in_use() { return detail::dispatch_trace_users.load(std::memory_order_relaxed) != 0; }
// Whether this thread traces.
inline bool dispatch_trace_enabled() { return dispatch_trace_in_use() && dispatch_trace_stream() != nullptr; }

// Writes `text` as one line of this thread's trace, indented as the steps of the call that runs now
// (so a line from a kernel sits under the kernel's own line), if this thread traces. A handler says
// what it decided this way: the Autograd key whether it recorded a node.
void dispatch_trace_note(std::string_view text);

// The tensors among `values` as a trace line shows them, dtype and shape: "(f32[8, 16], None)": each
// tensor (an undefined one is None), each tensor of a list, and None where `tensor_typed(i)` says
// value i stands for a tensor; other values are left out.
class IValue;
std::string describe_tensor_arguments(std::span<const IValue> values,
                                      const std::function<bool(std::size_t)>& tensor_typed = {});

namespace detail {
// How deep the dispatch steps this thread is inside are nested (the indentation of its next line).
int& dispatch_trace_depth();
}  // namespace detail

// This thread traces into `out` for the guard's lifetime, then goes back to what it did before.
class DispatchTraceGuard : NonCopyable {
 public:
  explicit DispatchTraceGuard(std::ostream& out);
  ~DispatchTraceGuard();

 private:
  std::ostream* saved_;
};

}  // namespace strata
