// ops/record_function.cpp: the two profiler ops, their observers, and the RAII scope.
#include "ops/record_function.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <typeinfo>
#include <vector>

#include "ops/op_table.h"

namespace strata::ops {

namespace {

std::mutex observers_mutex;
std::atomic<int> observer_count{0};  // lets scopes skip the lock and the clock when nobody listens
std::vector<RecordFunctionObserver*>& observers() {
  static std::vector<RecordFunctionObserver*> list;
  return list;
}

template <typename Fn>
void notify(const Fn& fn) {
  if (observer_count.load(std::memory_order_acquire) == 0) return;
  std::vector<RecordFunctionObserver*> copy;
  {
    std::lock_guard<std::mutex> lock(observers_mutex);
    copy = observers();
  }
  for (RecordFunctionObserver* o : copy) fn(*o);
}

// profiler::_record_function_enter_new(str name, str? args=None) -> _RecordFunction
void record_function_enter(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  (void)stack[stack.size() - 2].to_string_view();  // checks the name is a string
  // The arguments move into the handle: they are popped next anyway.
  auto record = IntrusivePtr<RecordFunction>::make(std::move(stack[stack.size() - 2]), std::move(stack[stack.size() - 1]));
  if (observer_count.load(std::memory_order_acquire) > 0) record->start_clock();
  notify([&](RecordFunctionObserver& o) { o.on_enter(*record); });
  stack.truncate(stack.size() - 2);
  stack.emplace_back(IntrusivePtr<CustomObject>::reclaim(record.release()));
}

// profiler::_record_function_exit._RecordFunction(_RecordFunction _0) -> ()
void record_function_exit(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IntrusivePtr<CustomObject> object = stack.back().to_object();
  // RecordFunction is final, so an exact type match is what a dynamic_cast would test, without its
  // walk of the class hierarchy.
  CustomObject& held = *object;  // typeid of a plain reference: no call inside typeid's operand
  auto* record = typeid(held) == typeid(RecordFunction) ? static_cast<RecordFunction*>(&held) : nullptr;
  STRATA_CHECK(record != nullptr, "expected a _RecordFunction handle but got ", object->type_name());
  record->finish(observer_count.load(std::memory_order_acquire) > 0);
  notify([&](RecordFunctionObserver& o) { o.on_exit(*record); });
  stack.pop_back();
}

}  // namespace

void RecordFunction::finish(bool timed) {
  if (timed) end_ = std::chrono::steady_clock::now();
  ended_ = true;
}

void add_record_function_observer(RecordFunctionObserver* observer) {
  std::lock_guard<std::mutex> lock(observers_mutex);
  observers().push_back(observer);
  observer_count.store(static_cast<int>(observers().size()), std::memory_order_release);
}

void remove_record_function_observer(RecordFunctionObserver* observer) {
  std::lock_guard<std::mutex> lock(observers_mutex);
  auto& list = observers();
  list.erase(std::remove(list.begin(), list.end(), observer), list.end());
  observer_count.store(static_cast<int>(list.size()), std::memory_order_release);
}

RecordFunctionScope::RecordFunctionScope(const IValue& name) {
  static const OperatorHandle enter = op("profiler::_record_function_enter_new");
  Stack stack;
  stack.push_back(name);
  stack.emplace_back();
  enter.call(stack);
  handle_ = std::move(stack.back());
}

void RecordFunctionScope::exit() {
  if (!open_) return;
  open_ = false;
  static const OperatorHandle exit_op = op("profiler::_record_function_exit", "_RecordFunction");
  Stack stack;
  stack.emplace_back(std::move(handle_));
  exit_op.call(stack);
}

RecordFunctionScope::~RecordFunctionScope() noexcept(false) {
  if (!open_) return;
  if (std::uncaught_exceptions() > 0) {
    try {
      exit();
    } catch (...) {  // an error is already propagating; do not replace it
    }
    return;
  }
  exit();
}

void register_profiler_ops(Dispatcher& d) {
  const KernelFunction enter{&record_function_enter, "record_function_enter"};
  const KernelFunction exit{&record_function_exit, "record_function_exit"};
  d.def("profiler", "_record_function_enter_new(str name, str? args=None) -> __torch__.torch.classes.profiler._RecordFunction",
        enter, enter);
  d.def("profiler", "_record_function_exit._RecordFunction(__torch__.torch.classes.profiler._RecordFunction _0) -> ()", exit,
        exit);
}

}  // namespace strata::ops
