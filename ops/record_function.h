// ops/record_function.h: PyTorch 2.x's record_function scope. Opening and closing a scope dispatch
// profiler::_record_function_enter_new and profiler::_record_function_exit._RecordFunction, ops
// without tensor arguments that dispatch modes still see (Note [The mode stack owns the Python key]).
// Optimizer::step runs inside one, as torch.optim does. Observers are the hook a profiler attaches to.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "../core/dispatch/ivalue.h"
#include "../core/util/non_copyable.h"
#include "../core/util/small_object_pool.h"

namespace strata::ops {

// The scope's handle, passed from the enter op to the exit op (PyTorch's torchbind _RecordFunction).
// Start and end times are taken only while an observer is registered (nobody else reads them).
class RecordFunction final : public CustomObject {
 public:
  RecordFunction(IValue name, IValue args) : name_(std::move(name)), args_(std::move(args)) {}
  // One is made and freed per scope (every optimizer step): the per-thread pool saves malloc and free.
  static void* operator new(std::size_t bytes) { return pool::allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { pool::deallocate(p, bytes); }
  std::string_view type_name() const override { return "__torch__.torch.classes.profiler._RecordFunction"; }
  std::string_view name() const { return name_.to_string_view(); }
  std::optional<std::string_view> args() const {
    return args_.is_none() ? std::nullopt : std::optional<std::string_view>(args_.to_string_view());
  }
  std::chrono::steady_clock::time_point start() const { return start_; }
  std::chrono::steady_clock::time_point end() const { return end_; }
  bool ended() const { return ended_; }
  void start_clock() { start_ = std::chrono::steady_clock::now(); }
  void finish(bool timed);

 private:
  IValue name_;  // shares the string passed to the enter op
  IValue args_;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point end_{};
  bool ended_ = false;
};

// Told about every scope that opens and closes (on the thread that runs it).
class RecordFunctionObserver {
 public:
  virtual ~RecordFunctionObserver() = default;
  virtual void on_enter(const RecordFunction&) {}
  virtual void on_exit(const RecordFunction&) {}
};
void add_record_function_observer(RecordFunctionObserver* observer);
void remove_record_function_observer(RecordFunctionObserver* observer);

// Opens a scope on construction; exit() closes it (and may throw, like any op). The destructor closes
// a scope that is still open, and swallows errors only while an exception is already unwinding.
class RecordFunctionScope : NonCopyable {
 public:
  explicit RecordFunctionScope(std::string_view name) : RecordFunctionScope(IValue(name)) {}
  // `name` is a boxed string; callers that open the same scope often keep one and pass it.
  explicit RecordFunctionScope(const IValue& name);
  ~RecordFunctionScope() noexcept(false);
  void exit();

 private:
  IValue handle_;
  bool open_ = true;
};

}  // namespace strata::ops
