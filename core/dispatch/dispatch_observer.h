// core/dispatch/dispatch_observer.h: the hook a profiler attaches to the dispatcher and the autograd engine
// (PyTorch's RecordFunction callbacks at Dispatcher::call and in the engine). One observer at a time,
// process-wide; it is told about every op called from the top on any thread, and about named scopes
// (the engine's "autograd::engine::evaluate_function: AddmmBackward0"). See Note [Observing dispatch].
#pragma once

#include <span>
#include <string_view>

#include "../util/non_copyable.h"

namespace strata {

class IValue;
class OperatorHandle;

// Note [Observing dispatch]
// An installed observer holds a use of the dispatch-trace count (Note [Tracing is per thread]), so
// every call takes the slow path, where run_slow tells the observer about it; with none installed
// nothing on the fast paths changes (the test they already make stays the one relaxed load). A call
// is observed once, however many keys it passes: run_slow keeps, per thread, the op and key of each
// step it is inside, and a step of the same op at a lower key than the step around it is that step's
// redispatch (Autograd to CPU, Python to CPU), not a new call. PyTorch's RecordFunction is opened in
// Dispatcher::call and not in redispatch, which gives the same events. Calls to the profiler
// namespace's own ops (record_function's enter and exit) are not observed: the scopes they open are
// reported through record-function observers (ops/record_function.h), and an event for the enter op
// would end before the scope it opens. on_op_enter and on_op_exit pair up on the calling thread, also
// when the kernel throws.
class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  // `args` are the op's arguments (the last schema().arguments().size() values of the stack).
  virtual void on_op_enter(const OperatorHandle& op, std::span<const IValue> args) = 0;
  virtual void on_op_exit() = 0;
  virtual void on_scope_enter(std::string_view name) = 0;
  virtual void on_scope_exit() = 0;
};

// Installs `observer` (null: removes the one installed). Throws strata::Error if another is installed.
void set_dispatch_observer(DispatchObserver* observer);
DispatchObserver* dispatch_observer();  // the installed observer, or null

// Opens a named scope for its lifetime on this thread when an observer is installed.
class ObservedScope : NonCopyable {
 public:
  explicit ObservedScope(std::string_view name);
  ~ObservedScope();

 private:
  DispatchObserver* observer_;
};

}  // namespace strata
