// core/dispatch/dispatcher.h: the operator registry and the dispatch loop.
// An op runs the highest key of its effective key set (see Note [Dispatch keys]); each key's handler
// either computes the result (CPU, Meta) or does its job and redispatches to the keys after it
// (Autograd, Python). Registration is explicit: each library registers its rows from a named function
// on first use (Note [Registration on first use]).
#pragma once

#include <array>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch_trace.h"
#include "local_dispatch_keys.h"
#include "operator_entry.h"

namespace strata {

// Note [Unboxed fast path]
// Every key's handler is boxed: it takes the argument stack. When a call would run the CPU kernel and
// nothing else (no tensor requires grad, no mode or wrapper is involved, tracing is off), boxing the
// arguments only to unbox them again is pure overhead on the hot path of small ops. So an op's CPU
// kernel may also be registered as a plain typed function, and its front end calls that directly in
// exactly that case (TypedOperator in ops/functions.h). Both forms are generated from the same meta
// and compute functions (ops/boxing.h), so they cannot disagree; the boxed path stays the reference,
// and everything observable (modes, autograd, traces) goes through it. PyTorch's KernelFunction keeps
// an unboxed and a boxed pointer for the same reason.

// Note [Registration is safe from any thread]
// Registration may happen on any thread while others dispatch: autograd registers its fallback on
// the first requires_grad_() of any thread, which rewrites the Autograd entry of every op's table,
// and a program may register ops or kernels whenever it likes. Writers (def, register_kernel,
// register_fallback, and the rest) hold the dispatcher's mutex, and lookups by name take it too. The
// dispatch hot path takes no lock: each entry of an op's resolved table is an atomic function
// pointer, stored with release order once everything it relies on is in place (autograd's fallback
// is published after the derivative table it reads is built) and loaded with acquire order, which on
// x86 is the plain load it was before. A dispatch racing a registration runs what was there before
// or what is there after, never a torn entry. Everything else an entry holds is read under the mutex
// (the kernel names the trace and dump_table print, the unboxed kernel a front end asks for once), or
// atomically off the hot path (whether an op may mix devices, read only when a call does).

// Note [A call from the top passes Autograd]
// In PyTorch every tensor carries the autograd keys, so every call from the top runs the autograd
// kernel, which redispatches with the autograd keys excluded (AutoDispatchBelowADInplaceOrView)
// whether or not it recorded: a mode's or a wrapper subclass's handler, reached below it, never
// records its own ops, even on tensors that require grad (a wrapper's inner tensor, say). strata puts
// the Autograd key only on tensors that require grad (Note [Dispatch keys]), so a call without one
// skips the Autograd handler; when such a call goes to the interposer, call() runs the Autograd handler
// after all (or, before autograd registered one, makes the exclusion it would have made), so
// handlers see PyTorch's state: a LoggingTensor that does not
// require grad over one that does runs its op on the inner tensor without a graph (and an in-place
// op there makes no node that holds the tensor it wrote). Calls that enter at the interposer on
// purpose (shallow_copy_and_detach's detach, PyTorch's PyInterpreter::detach) are redispatches and
// keep the thread's state, as PyTorch's do. Plain calls never reach the branch: the unboxed fast path
// takes them first, and the boxed path pays one test.

// Note [Registration on first use]
// No static constructors register anything: their order is unspecified and a linker drops unused ones
// from static archives. Each library owns a function that registers its rows (ops/op_table.cpp,
// autograd/derivative_table.cpp) and runs it once, from the first call that needs it: ops from the
// first op lookup, autograd from the first requires_grad_(), the interposer (core/interpose/interposer.cpp) from
// the first dispatch mode or wrapper tensor: nothing reaches the Python key before one exists.
class Dispatcher {
 public:
  static Dispatcher& singleton();
  using ErasedFn = void (*)();  // an unboxed kernel, its type erased

  // Registers an op: its namespace ("aten"), its PyTorch schema, its CPU kernel and its meta function.
  OperatorHandle def(std::string_view ns, std::string_view schema, KernelFunction cpu, KernelFunction meta);
  // Lets `op` take tensors on different devices (copy_ moves data between them); any other call
  // mixing a CPU and a meta tensor is refused (Note [Boxed calls are checked where keys are read]).
  void allow_mixed_devices(const OperatorHandle& op);
  // Registers a per-op kernel at `key` (overrides that key's fallback for this op).
  void register_kernel(const OperatorHandle& op, DispatchKey key, KernelFunction kernel);
  // Registers the unboxed form of an op's CPU kernel (Note [Unboxed fast path]).
  template <typename Sig>
  void register_unboxed_cpu(const OperatorHandle& op, Sig* fn) {
    set_unboxed_cpu(op, reinterpret_cast<ErasedFn>(fn), typeid(Sig));
  }
  // Registers the boxed fallback that runs at `key` for every op without its own kernel there.
  void register_fallback(DispatchKey key, KernelFunction kernel);

  // The CPU kernel of `op` as a plain C++ function of type `signature` (type-erased: the caller casts
  // it back), or null if it has none or another signature (Note [Unboxed fast path]);
  // has_unboxed_cpu: whether it has one at all. Read under the lock: a front end asks once.
  ErasedFn unboxed_cpu(const OperatorHandle& op, const std::type_info& signature) const;
  bool has_unboxed_cpu(const OperatorHandle& op) const;

  std::optional<OperatorHandle> find(std::string_view qualified_name, std::string_view overload = "") const;
  OperatorHandle find_or_throw(std::string_view qualified_name, std::string_view overload = "") const;
  std::vector<OperatorHandle> ops() const;

  // One line per key: what runs there for `op` (its kernel, a fallback, or nothing).
  std::string dump_table(const OperatorHandle& op) const;

  // The effective keys of a call: (argument keys | thread's included) - thread's excluded.
  // Note [One place computes the effective key set]: only this and runs_cpu_only() below combine
  // these sets.
  static DispatchKeySet effective_keys(const OperatorHandle& op, const Stack& stack) {
    return effective_keys(op.entry().argument_keys(stack));
  }
  static DispatchKeySet effective_keys(DispatchKeySet argument_keys) {
    const LocalDispatchKeys& local = local_dispatch_keys();
    return (argument_keys | local.included) - local.excluded;
  }
  // Whether a call whose tensors carry `argument_keys` would run the CPU kernel and nothing else
  // (no recording Autograd, no interposer, no tracing on any thread: Note [Tracing is per thread]):
  // then a front end may call the unboxed kernel. Transparent keys only redispatch, so they do not
  // count (Note [Transparent keys]).
  static bool runs_cpu_only(DispatchKeySet argument_keys) {
    const LocalDispatchKeys& local = local_dispatch_keys();
    return ((argument_keys | local.included) - local.excluded - local.transparent) == DispatchKeySet(DispatchKey::CPU) &&
           !argument_keys.has(DispatchKey::Python) && !dispatch_trace_in_use();
  }
  // Dispatches from the top. A call that reaches the interposer without passing the Autograd key runs
  // it below Autograd all the same (Note [A call from the top passes Autograd]).
  static void call(const OperatorHandle& op, Stack& stack) { call_with_keys(op, effective_keys(op, stack), stack); }
  // call() from a front end that has read its tensors' keys already (argument_keys: the union of
  // their key sets, every tensor the schema requires defined, as ops/typed_operator.h checks), so
  // the stack is not read for them again. A call without a backend key (no tensor argument) reads
  // the stack, which supplies the op's default backend.
  static void call(const OperatorHandle& op, DispatchKeySet argument_keys, Stack& stack) {
    if (!argument_keys.has_any(kBackendKeys)) [[unlikely]] {
      call(op, stack);
      return;
    }
    call_with_keys(op, effective_keys(argument_keys), stack);
  }
  // Prefixes an error leaving `op` with its name, once (Note [Errors name the op]).
  static void name_error(Error& e, const OperatorHandle& op) { name_op(e, op); }
  // Runs the highest key of `keys`; handlers pass keys.after(their key).
  static void redispatch(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) { run(op, keys, stack); }

 private:
  Dispatcher();
  static void call_with_keys(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
    if (keys.has(DispatchKey::Python) && !keys.has(DispatchKey::Autograd)) [[unlikely]] {
      run_below_autograd(op, keys, stack);
      return;
    }
    run(op, keys, stack);
  }
  static void run(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
    if (keys.empty() || dispatch_trace_in_use()) [[unlikely]] {
      run_slow(op, keys, stack);
      return;
    }
    const DispatchKey top = keys.highest_priority();
    const BoxedKernelFn kernel = op.entry().resolved(top);
    if (!kernel) [[unlikely]] {
      run_slow(op, keys, stack);
      return;
    }
    check_devices(op, keys, top, stack);
    try {
      kernel(op, keys, stack);
    } catch (Error& e) {
      name_op(e, op);
      throw;
    }
  }
  static void run_slow(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);
  // Note [Devices are checked at the backend]
  // A CPU tensor and a meta tensor in one call would run the meta kernel silently (Meta is the higher
  // backend) where PyTorch refuses: "Expected all tensors to be on the same device". PyTorch refuses
  // in the backend kernel (TensorIterator, the meta function), below the Python key, so a dispatch
  // mode or a subclass sees and logs the call first; strata checks at the same point, when the key
  // about to run is CPU or Meta, whichever way the call got there (a mode calling through, a handler
  // redispatching below Python). Like PyTorch, a 0-d CPU tensor mixes with anything, and an op that
  // moves data between devices (copy_) allows the mix. The test is one mask on the common path.
  static void check_devices(const OperatorHandle& op, DispatchKeySet keys, DispatchKey top, const Stack& stack) {
    if (keys.has(DispatchKey::CPU) && keys.has(DispatchKey::Meta) && kBackendKeys.has(top)) [[unlikely]] {
      try {
        op.entry().check_same_device(stack.data() + stack.size() - op.entry().num_args_);
      } catch (Error& e) {
        name_op(e, op);
        throw;
      }
    }
  }
  // run() with Autograd excluded (Note [A call from the top passes Autograd]); out of line, off the
  // common path.
  [[gnu::noinline]] static void run_below_autograd(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);
  // "kernel <name>" or "fallback <name>": what runs at `key` for `op`, read under the lock (the trace).
  std::string describe(const OperatorHandle& op, DispatchKey key) const;
  void set_unboxed_cpu(const OperatorHandle& op, ErasedFn fn, const std::type_info& signature);
  static void name_op(Error& e, const OperatorHandle& op);
  void resolve(OperatorEntry& entry);

  mutable std::mutex mutex_;
  std::deque<OperatorEntry> entries_;  // a deque keeps entry addresses stable for handles
  std::array<KernelFunction, kNumDispatchKeys> fallbacks_{};
};

inline void OperatorHandle::call(Stack& stack) const { Dispatcher::call(*this, stack); }
inline void OperatorHandle::redispatch(DispatchKeySet keys, Stack& stack) const {
  Dispatcher::redispatch(*this, keys, stack);
}

}  // namespace strata
