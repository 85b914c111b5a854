// ops/record_function.h: PyTorch 2.x's record_function scope. Opening and closing a scope dispatch
// profiler::_record_function_enter_new and profiler::_record_function_exit._RecordFunction, ops
// without tensor arguments that dispatch modes still see (Note [The mode stack owns the Python key]).
// Optimizer::step runs inside one, as torch.optim does. Observers are the hook a profiler attaches to.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/ivalue.h"

namespace strata::ops {

// The scope's handle, passed from the enter op to the exit op (PyTorch's torchbind _RecordFunction).
class RecordFunction final : public CustomObject {
 public:
  RecordFunction(std::string name, std::optional<std::string> args);
  std::string_view type_name() const override { return "__torch__.torch.classes.profiler._RecordFunction"; }
  const std::string& name() const { return name_; }
  const std::optional<std::string>& args() const { return args_; }
  std::chrono::steady_clock::time_point start() const { return start_; }
  std::chrono::steady_clock::time_point end() const { return end_; }
  bool ended() const { return ended_; }
  void finish();

 private:
  std::string name_;
  std::optional<std::string> args_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point end_;
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
class RecordFunctionScope {
 public:
  explicit RecordFunctionScope(std::string_view name);
  ~RecordFunctionScope() noexcept(false);
  RecordFunctionScope(const RecordFunctionScope&) = delete;
  RecordFunctionScope& operator=(const RecordFunctionScope&) = delete;
  void exit();

 private:
  IValue handle_;
  bool open_ = true;
};

}  // namespace strata::ops
