// core/interpose/function_mode.h: the function-level interposer (PyTorch's __torch_function__ and
// TorchFunctionMode). Every public front-end function (torch.mm, torch.Tensor.add_,
// torch.nn.functional.linear, torch.Tensor.backward...) announces itself, boxed, to a thread-local
// stack of function modes, then to the tensor subclasses among its arguments that take function
// calls (core/interpose/interposer.h), before it decomposes into dispatched ops. ops/torch_function.h is the
// one wrapper the front-end functions use; this file is what a handler sees and how it is entered.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../dispatch/ivalue.h"
#include "../util/non_copyable.h"

namespace strata {

class FunctionCall;

// A function mode sees every announced front-end call on this thread while it is active (PyTorch's
// TorchFunctionMode.__torch_function__(func, types, args, kwargs)).
class FunctionMode {
 public:
  virtual ~FunctionMode() = default;
  virtual std::string_view name() const = 0;
  // This mode is popped while torch_function runs (Note [Function modes are popped while they run]).
  // It answers the call in one of two ways:
  //  - call.call_through() runs the function below it (the next mode out, or the function itself:
  //    PyTorch's `func(*args, **kwargs)`) and stores its result; the mode may then replace it with
  //    call.set_result(...);
  //  - call.set_result(...) without calling through: the function does not run.
  // Returning with no result set is an error naming the mode and the function.
  virtual void torch_function(FunctionCall& call) = 0;
};

// The parameter list of an announced function as PyTorch's handler receives it: positional names,
// then keyword names (after `*`); `name=VALUE` is a constant strata's function always passes (None,
// True, False, an integer, a float or a 'string'), e.g. cross_entropy's `size_average=None`;
// `[name]` and `[name=VALUE]` are parameters with a default, left out of the call when the C++
// argument is None or VALUE (Note [Arguments at their default are not passed]); `*name` is Python's
// variadic positional (torch.functional.einsum's `*operands`): its C++ argument, a tensor list, is
// passed as one positional argument per tensor.
// Parsed once per function, on its first announced call.
struct FunctionSignature {
  struct Param {
    std::string name;
    bool keyword = false;
    bool constant = false;
    bool has_default = false;  // `[name]` (default None) or `[name=VALUE]`
    bool variadic = false;     // `*name`: a tensor list spread into positionals
    IValue value;              // the constant, when `constant`; the default, when `has_default`
  };
  // `name`: PyTorch's public name (torch.overrides.resolve_name): "torch.mm", "torch.Tensor.add_".
  FunctionSignature(std::string_view name, std::string_view params);
  std::string name;
  // How upstream DebugMode prints the function (`f"{func.__module__}.{func.__name__}"`, or str(func)
  // for a Tensor method implemented in C): "torch.mm", "torch._C._nn.linear", "torch._tensor.backward",
  // "<method 'add_' of 'torch._C.TensorBase' objects>".
  std::string repr_name;
  std::vector<Param> params;
  std::size_t num_boxed = 0;  // the params that are not constants: what the C++ call boxes
};

// Note [Arguments at their default are not passed]
// A C-bound PyTorch function receives only the arguments its caller wrote: `x.sum()` reaches a
// handler as args (x,), `x.add(y, alpha=2)` as (x, y) with kwargs {alpha: 2}. A C++ call always
// passes every parameter, and an argument at its default is what a caller who left it out passes,
// so a parameter declared with its default is left out of the call when it holds that value: a
// keyword one always, a positional one only when every positional after it is left out too (Python
// cannot skip a positional). A Python function that passes everything on (F.relu's `inplace`,
// Tensor.backward's four keywords) declares no defaults.

// One announced call: PyTorch's (func, args, kwargs) plus its result once known.
class FunctionCall {
 public:
  FunctionCall(const FunctionSignature& signature, std::vector<IValue> boxed);
  FunctionCall(const FunctionCall&) = delete;
  FunctionCall& operator=(const FunctionCall&) = delete;

  const FunctionSignature& signature() const { return *signature_; }
  std::string_view name() const { return signature_->name; }            // "torch.nn.functional.linear"
  std::string_view repr_name() const { return signature_->repr_name; }  // "torch._C._nn.linear"
  // Positional arguments, then keyword arguments by name, as PyTorch's handler receives them. Tensors
  // are the caller's tensors (aliases, not copies).
  const std::vector<IValue>& args() const { return args_; }
  const std::vector<std::pair<std::string_view, IValue>>& kwargs() const { return kwargs_; }
  // The argument named `name`, positional or keyword; null when there is none.
  const IValue* find(std::string_view name) const;
  // Whether `v` is a parameter's default `default_value` (None, a bool, a number or a string).
  static bool is_default(const IValue& v, const IValue& default_value);

  // Runs what is below the current mode and stores its result (None for a function returning
  // nothing, a tensor list for one returning several tensors). May be called more than once.
  void call_through();
  bool has_result() const { return has_result_; }
  const IValue& result() const { return result_; }
  void set_result(IValue result) {
    result_ = std::move(result);
    has_result_ = true;
  }
  void clear_result() {
    result_ = IValue();
    has_result_ = false;
  }
  // Who answered the call, for errors about its result: "the function mode DebugMode".
  const std::string& handler() const { return handler_; }
  void set_handler(std::string handler) { handler_ = std::move(handler); }

  // For ops/torch_function.h: the function below the current mode, run by call_through().
  using Through = void (*)(void* context, FunctionCall& call);
  void set_through(Through through, void* context) {
    through_ = through;
    context_ = context;
  }

 private:
  const FunctionSignature* signature_;
  std::vector<IValue> args_;
  std::vector<const FunctionSignature::Param*> arg_params_;  // the parameter each of args_ is
  std::vector<std::pair<std::string_view, IValue>> kwargs_;
  IValue result_;
  bool has_result_ = false;
  std::string handler_;
  Through through_ = nullptr;
  void* context_ = nullptr;
};

// Note [Function modes are popped while they run]
// As PyTorch's handle_torch_function (_pop_mode_temporarily), the innermost mode is taken off the
// stack while its torch_function runs, and put back afterwards, also when it throws. So:
//  - the calls a mode makes itself reach only the modes outside it;
//  - call_through() re-enters the function with the stack one shorter: the next mode out handles it,
//    and when none is left the function itself runs, with no mode on the stack. The calls a
//    front-end function makes inside (linear's addmm and t, cross_entropy's log_softmax) are
//    therefore never announced, as PyTorch's C++ and Python internals are not: a mode sees the
//    functions its user called.
// The autograd engine runs its passes with function modes disabled (DisableFunctionModes): a
// backward's formulas are C++ in PyTorch and never reach a TorchFunctionMode.

// Note [One test per call]
// A front-end function first tests one process-wide counter, function_layer_in_use(): the live
// FunctionModeGuards on any thread plus the live subclass payloads that take function calls (Note
// [A subclass takes function calls]). While it is zero, that load and a not-taken branch are the
// whole cost of the layer. Otherwise the function asks, still before boxing anything, whether this
// thread has a mode enabled (function_modes_enabled(), a thread-local bool true only while the
// thread's stack is non-empty and no DisableFunctionModes is active) or subclass hooks enabled and
// such a subclass among its arguments; if neither, it runs as usual. A counter rather than the
// thread-local alone because a subclass tensor made on one thread may be used on another, whose
// thread-locals cannot be reached; the price is that while a mode is active on one thread, the
// other threads' front-end calls take the second test too (a few loads, no boxing).
namespace detail {
extern constinit thread_local bool tls_function_modes_enabled;
extern constinit thread_local bool tls_subclass_functions_enabled;
extern constinit std::atomic<std::uint32_t> function_layer_users;
inline void add_function_layer_user() { function_layer_users.fetch_add(1, std::memory_order_relaxed); }
inline void remove_function_layer_user() { function_layer_users.fetch_sub(1, std::memory_order_relaxed); }
inline bool function_layer_in_use() { return function_layer_users.load(std::memory_order_relaxed) != 0; }
}  // namespace detail
inline bool function_modes_enabled() { return detail::tls_function_modes_enabled; }
// Whether subclass hooks may run on this thread (no DisableFunctionModes nor DisableSubclassFunctions).
inline bool subclass_functions_enabled() { return detail::tls_subclass_functions_enabled; }

// Enters a function mode for its lifetime (PyTorch's `with mode:`); modes nest, innermost first.
class FunctionModeGuard : NonCopyable {
 public:
  explicit FunctionModeGuard(FunctionMode& mode);
  ~FunctionModeGuard();

 private:
  FunctionMode* mode_;
};

// What a DisableFunctions guard turns off on this thread while it lives. Guards nest.
//  - All: PyTorch's torch._C.DisableTorchFunction: no front-end call is announced, to a mode or to
//    a subclass (the stack is kept, and seen again afterwards).
//  - Subclasses: PyTorch's torch._C.DisableTorchFunctionSubclass (1.13's DisableTorchFunction): no
//    subclass hook runs; function modes still do. Entered around every subclass hook.
enum class FunctionHooks { All, Subclasses };
template <FunctionHooks Off>
class DisableFunctions : NonCopyable {
 public:
  DisableFunctions();
  ~DisableFunctions();
};
extern template class DisableFunctions<FunctionHooks::All>;
extern template class DisableFunctions<FunctionHooks::Subclasses>;
using DisableFunctionModes = DisableFunctions<FunctionHooks::All>;
using DisableSubclassFunctions = DisableFunctions<FunctionHooks::Subclasses>;

FunctionMode* current_function_mode();  // the innermost active mode, or null
std::size_t function_mode_stack_size();

namespace detail {
// Hands `call` to the innermost mode (popped while it runs) when function_modes_enabled(), else to
// the subclasses among its arguments that take function calls (Note [A subclass takes function
// calls]), and checks a result was left. Called by ops/torch_function.h.
void run_torch_function(FunctionCall& call);
// The subclass half of run_torch_function (core/interpose/subclass_function.cpp).
void run_subclass_functions(FunctionCall& call);
// The error for a result a function cannot return (`expected` says what it takes).
[[noreturn, gnu::cold]] void throw_bad_function_result(const FunctionCall& call, std::string_view expected);
}  // namespace detail

}  // namespace strata
