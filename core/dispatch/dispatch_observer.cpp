// core/dispatch/dispatch_observer.cpp: installing the dispatch observer (Note [Observing dispatch]). The calls
// into it are made in dispatcher.cpp's run_slow and autograd/engine.cpp.
#include "core/dispatch/dispatch_observer.h"

#include <atomic>
#include <mutex>

#include "core/dispatch/dispatch_trace.h"
#include "core/util/error.h"

namespace strata {

namespace {
std::mutex observer_mutex;
std::atomic<DispatchObserver*> installed{nullptr};
}  // namespace

void set_dispatch_observer(DispatchObserver* observer) {
  std::lock_guard<std::mutex> lock(observer_mutex);
  DispatchObserver* was = installed.load(std::memory_order_relaxed);
  STRATA_CHECK(observer == nullptr || was == nullptr || was == observer,
               "a profiler is already running (one at a time, process-wide)");
  if (was == observer) return;
  installed.store(observer, std::memory_order_release);
  // The observer holds a use of the trace count while installed: every call takes the slow path.
  detail::dispatch_trace_users.fetch_add(observer ? 1 : -1, std::memory_order_acq_rel);
}

DispatchObserver* dispatch_observer() { return installed.load(std::memory_order_acquire); }

ObservedScope::ObservedScope(std::string_view name) : observer_(dispatch_observer()) {
  if (observer_) observer_->on_scope_enter(name);
}

ObservedScope::~ObservedScope() {
  if (observer_) observer_->on_scope_exit();
}

}  // namespace strata
