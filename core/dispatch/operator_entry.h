// core/dispatch/operator_entry.h: one operator's row in the dispatcher: its name, parsed schema, the kernels
// registered for it per key, and the resolved table the hot path reads (kernel, else the key's
// fallback). OperatorHandle is the cheap handle front ends resolve once and keep.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <typeinfo>

#include "dispatch_key.h"
#include "function_schema.h"
#include "ivalue.h"

namespace strata {

class OperatorHandle;

// A boxed kernel: reads its arguments from the end of `stack`, replaces them with its returns.
// `keys` is the key set it was dispatched with, for handlers that redispatch (keys.after(mine)).
using BoxedKernelFn = void (*)(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

struct KernelFunction {
  BoxedKernelFn fn = nullptr;
  std::string_view name;  // shown by dump_table and the dispatch trace
  explicit operator bool() const { return fn != nullptr; }
};

struct OperatorName {
  std::string ns;        // "aten"
  std::string name;      // "addmm"
  std::string overload;  // "" for the default overload

  std::string qualified() const { return ns + "::" + name; }  // "aten::addmm"
  // PyTorch's str(OpOverload): "aten.addmm.default", "aten.add.Tensor".
  std::string str() const { return ns + "." + name + "." + (overload.empty() ? "default" : overload); }
};

class OperatorEntry {
 public:
  OperatorEntry(std::string ns, FunctionSchema schema, std::uint32_t index);

  const OperatorName& name() const { return name_; }
  const std::string& str() const { return str_; }  // name().str(), computed once
  const FunctionSchema& schema() const { return schema_; }
  std::uint32_t index() const { return index_; }
  std::size_t num_arguments() const { return schema_.arguments().size(); }
  std::size_t num_returns() const { return schema_.returns().size(); }

  // The keys of this call's arguments (the last num_arguments() values of `stack`): the union of its
  // tensors' key sets; with no tensor, the backend of its `device` argument (CPU by default).
  // Also where a boxed call's arguments are checked (Note [Boxed calls are checked where keys are read]).
  DispatchKeySet argument_keys(const Stack& stack) const {
    if (stack.size() < num_args_) [[unlikely]] throw_short_stack(stack.size());
    const IValue* args = stack.data() + stack.size() - num_args_;
    std::uint64_t bits = 0;
    for (std::uint8_t i : tensor_args_) {
      const IValue& v = args[i];
      if (v.is_tensor() && v.to_tensor().defined()) bits |= v.to_tensor().key_set().raw();
      else if (v.is_tensor_list()) bits |= list_keys(v).raw();
      else if (required_tensors_ >> i & 1) [[unlikely]] throw_missing_tensor(i);
    }
    DispatchKeySet keys = DispatchKeySet::from_raw(bits);
    if (!keys.has_any(kBackendKeys)) [[unlikely]] keys = keys | default_backend(args);
    return keys;
  }
  // Positions of the Tensor arguments that may not be None (not Tensor?, not Tensor[]): bit i is
  // argument i.
  std::uint64_t required_tensors() const { return required_tensors_; }
  [[noreturn]] void throw_missing_tensor(std::size_t position) const;

  // What runs at `key`: the op's kernel, else the key's fallback, else null (Note [Registration is safe
  // from any thread]). One load, which on x86 is a plain mov.
  BoxedKernelFn resolved(DispatchKey key) const { return table_[static_cast<int>(key)].load(std::memory_order_acquire); }

  // Schema positions of the Tensor, Tensor? and Tensor[] arguments.
  ArrayRef<std::uint8_t> tensor_arguments() const { return tensor_args_; }
  // Schema positions of the Tensor arguments the op writes (Tensor(a!)), of the Device arguments, and
  // of the returns that are one Tensor (not Tensor[]): what a mode or subclass handler's caller reads
  // on every call, computed once from the schema.
  ArrayRef<std::uint8_t> written_tensor_arguments() const { return written_tensor_args_; }
  ArrayRef<std::uint8_t> device_arguments() const { return device_args_; }
  ArrayRef<std::uint8_t> tensor_returns() const { return tensor_returns_; }

 private:
  friend class Dispatcher;
  static DispatchKeySet list_keys(const IValue& list);
  DispatchKeySet default_backend(const IValue* args) const;
  [[noreturn]] void throw_short_stack(std::size_t stack_size) const;
  // Refuses a call that mixes CPU and meta tensors, unless the op allows it (copy_).
  void check_same_device(const IValue* args) const;

  OperatorName name_;
  std::string str_;
  FunctionSchema schema_;
  std::uint32_t index_;
  std::size_t num_args_;
  SmallVector<std::uint8_t, 8> tensor_args_;  // positions of Tensor, Tensor? and Tensor[] arguments
  SmallVector<std::uint8_t, 2> written_tensor_args_;
  SmallVector<std::uint8_t, 2> device_args_;
  SmallVector<std::uint8_t, 2> tensor_returns_;
  std::uint64_t required_tensors_ = 0;
  // The argument named `device`, whose value picks the backend of a call without tensors (a factory),
  // as PyTorch's BackendSelect reads a factory's `device`; -1 if none. A Device argument of another
  // name is among device_args_ only.
  int backend_device_arg_ = -1;
  // Written under the dispatcher's lock. The resolved table is read without it, so it is atomic; the
  // rest is read under the lock, or (mixed_devices_ok_) atomically off the hot path (Note
  // [Registration is safe from any thread]).
  std::atomic<bool> mixed_devices_ok_{false};  // copy_ moves data between devices
  std::array<KernelFunction, kNumDispatchKeys> kernels_{};  // registered for this op
  std::array<std::atomic<BoxedKernelFn>, kNumDispatchKeys> table_{};  // what runs: kernel, else fallback
  void (*unboxed_cpu_)() = nullptr;                          // the CPU kernel, unboxed (type-erased)
  const std::type_info* unboxed_signature_ = nullptr;
};

class OperatorHandle {
 public:
  OperatorHandle() = default;
  explicit OperatorHandle(const OperatorEntry* entry) : entry_(entry) {}

  const OperatorEntry& entry() const { return *entry_; }
  const OperatorName& name() const { return entry_->name(); }
  const std::string& str() const { return entry_->str(); }  // "aten.addmm.default"
  const FunctionSchema& schema() const { return entry_->schema(); }
  std::uint32_t index() const { return entry_->index(); }
  bool valid() const { return entry_ != nullptr; }

  // Dispatches from the top with this thread's key state (Dispatcher::call).
  void call(Stack& stack) const;
  // Runs the highest key of `keys` (Dispatcher::redispatch).
  void redispatch(DispatchKeySet keys, Stack& stack) const;

  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }

 private:
  const OperatorEntry* entry_ = nullptr;
};

}  // namespace strata
