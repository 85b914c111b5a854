// core/interpose/interposer.h: the Python-key interposer: dispatch modes (PyTorch's TorchDispatchMode) and
// wrapper tensor subclasses (PyTorch's __torch_dispatch__ on _make_wrapper_subclass tensors), in C++.
// Both are reached through one boxed fallback at the Python key. What is built on them (op counters,
// LoggingTensor, DebugMode...) lives in tracer/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "../dispatch/dispatcher.h"
#include "../util/non_copyable.h"
#include "function_mode.h"
#include "../util/small_object_pool.h"
#include "../util/small_vector.h"
#include "../tensor.h"

namespace strata {

// A dispatch mode sees every op that reaches the Python key on this thread while it is active.
class DispatchMode {
 public:
  virtual ~DispatchMode() = default;
  virtual std::string_view name() const = 0;
  // The op's arguments are the last op.schema().arguments().size() values of `stack`; replace them
  // with its returns (Note [The handler protocol]). This mode is popped while dispatch() runs, so
  // `op.call(stack)` reaches the next mode, a wrapper subclass, or the kernel (PyTorch's
  // `func(*args, **kwargs)`).
  virtual void dispatch(const OperatorHandle& op, Stack& stack) = 0;
};

// Note [The handler protocol]
// A mode's or a wrapper subclass's dispatch() answers an op in one of three ways, as a Python
// __torch_dispatch__ does:
//  - it replaces the op's arguments on the stack with the op's returns (op.call(stack) does that);
//    a Tensor return may be an undefined Tensor or None (PyTorch's handler returning None), which
//    the caller receives as an undefined Tensor;
//  - it calls return_not_implemented() and returns, leaving the arguments as it found them (PyTorch's
//    `return NotImplemented`): the next handler is tried (Note [Who handles an op]);
//  - anything else is an error naming the handler and the op: too many or too few values, a value of
//    the wrong type, or the arguments left on the stack without return_not_implemented() (a handler
//    that forgot op.call; the interposer tells that from a return that is an argument, such as
//    relu_'s self, by marking the argument slots: Note [A handler's arguments are marked]).
void return_not_implemented();

// Note [Who handles an op]
// PyTorch's handle_torch_function: the innermost mode first (popped while it runs). If there is none,
// or it returns NotImplemented (it is back on the stack by then), the wrapper subclasses among the
// arguments, each type once, in order of appearance except that a subclass goes before any type it
// derives from (NumPy's NEP 18 rule, PyTorch's append_overloaded_arg). When every handler tried
// returns NotImplemented, the op fails with PyTorch's "Multiple dispatch failed" error listing them.

// Note [The mode stack owns the Python key]
// While the thread's mode stack is non-empty the Python key is in its included set, so the modes see
// ops without tensor arguments too (the profiler record-function ops of Optimizer::step). The bit is
// recomputed from the stack whenever the stack changes, so it cannot drift from it.

// Enters a mode for its lifetime (PyTorch's `with mode:`); modes nest, the innermost runs first.
class ModeGuard : NonCopyable {
 public:
  explicit ModeGuard(DispatchMode& mode);
  ~ModeGuard();

 private:
  DispatchMode* mode_;
};

// Note [Seeing inside a subclass's handler]
// A mode that declines an op (return_not_implemented) lets the subclass handle it with the mode back
// on the stack, so the mode sees the ops the handler runs, but not where the handler ends: the op's
// returns never come back to it. A mode that needs both (the trace recorder, tracer/program_trace.h)
// instead re-enters itself (a ModeGuard inside its own dispatch) and calls call_subclass_handlers:
// the handler's ops reach the mode nested inside the call, and the returns are on the stack when it
// returns. A written wrapper is still bumped once, by the interposer, after the mode's dispatch.

// Hands `op` to the wrapper subclasses among its arguments on `stack`, as the interposer does when no
// mode answers (Note [Who handles an op]), with the mode stack as it is. Throws strata::Error when no
// argument is a wrapper subclass, or (upstream's "Multiple dispatch failed") when all decline.
void call_subclass_handlers(const OperatorHandle& op, Stack& stack);

DispatchMode* current_mode();  // the innermost active mode, or null
std::size_t mode_stack_size();

// The inner tensors of a wrapper subclass by name, plus the subclass's opaque context
// (PyTorch's __tensor_flatten__ returns (inner names, ctx)).
struct FlattenedTensor {
  std::vector<std::string> names;
  std::vector<Tensor> inner;
  std::shared_ptr<const void> context;
};

// The payload of a subclass tensor, which carries the Python key and whose subclass decides what every
// op on it means: a wrapper (no storage of its own, make_wrapper_tensor), or a tensor with a storage
// (make_subclass over real data, a fake over a meta one: those count versions in their storage, and
// FakeTensor's payload is shared by all of a mode's fakes).
// Note [A wrapper's version counter]
// A wrapper has no storage to count its in-place writes (Note [Version counters live in the
// storage]), so its payload counts them, as PyTorch's VariableVersion does for every tensor: the
// interposer bumps it once after a mode or a subclass handled an op that writes the wrapper (a
// `Tensor(a!)` argument: add_, zero_...; Note [A written wrapper is bumped once per op],
// core/interpose/interposer.cpp), and a wrapper's detach shares it (the shallow copy of Note [Detach and
// the interposer] gives the copy the source's counter), so `add_(detach(x), y)` bumps x's version as
// upstream's test_version expects. A payload belongs to one wrapper family: make_wrapper_tensor
// twice with one payload gives two tensors that share a counter.
//
// Note [Payloads come from the pool]
// Some subclasses make a payload for every op's result (LoggingTensor wraps each result), so a
// payload and its version counter are allocated from the per-thread small-object pool, as TensorImpls
// and autograd nodes are, and a fresh payload takes its first reference with a plain store (a
// subclass's wrap adopts the payload it just made: IntrusivePtr::adopt). operator delete is sized: a
// payload is destroyed through the virtual destructor, which passes the size of the most derived
// class, so a subclass must not declare an operator new of its own.
//
// Note [A wrapper's version counter is made on first use]
// Most wrappers are an op's result that is read and dropped, never written in place nor detached, so
// a payload makes its counter when first asked to bump or share it; until then it reads as version
// 0, the value a fresh counter holds. Two threads may ask a shared payload at once (a const method):
// the counter is published with a compare-and-swap, and the loser drops its own.
class TensorSubclass : public RefCounted<TensorSubclass> {
 public:
  TensorSubclass() = default;
  TensorSubclass(const TensorSubclass& other);
  TensorSubclass& operator=(const TensorSubclass&) = delete;
  virtual ~TensorSubclass();
  static void* operator new(std::size_t bytes) { return pool::allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { pool::deallocate(p, bytes); }
  std::uint32_t version() const {
    const VersionCounter* c = version_.load(std::memory_order_acquire);
    return c ? c->value.load(std::memory_order_relaxed) : 0;
  }
  void bump_version() { counter().value.fetch_add(1, std::memory_order_relaxed); }
  void share_version_counter(const TensorSubclass& source);
  virtual std::string_view type_name() const = 0;  // "LoggingTensor"
  // __torch_dispatch__: runs for ops that reach the Python key with this tensor as the first
  // wrapper argument and no mode active. Same stack protocol as DispatchMode::dispatch.
  virtual void dispatch(const OperatorHandle& op, Stack& stack) = 0;
  // __tensor_flatten__ / __tensor_unflatten__ (the latter is a class method: `this` only picks the type).
  // `self` is the tensor this payload belongs to, as upstream's `self`: a payload that several tensors
  // share (FakeTensor's, one per mode) finds what to flatten there.
  virtual FlattenedTensor flatten(const Tensor& self) const = 0;
  virtual Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const = 0;
  // How `self` prints; by default "<type_name>(size=[...], dtype=...)".
  virtual std::string repr(const Tensor& self) const;
  // Whether `other` is of this payload's type or of a type derived from it (Python's
  // issubclass(type(other), type(self))): a derived subclass handles an op before its base (Note
  // [Who handles an op]). By default only the same type; a subclass others derive from overrides it
  // as `return type_includes_as<MyType>(*this, other);`.
  virtual bool type_includes(const TensorSubclass& other) const;
  // An attribute this subclass sets on `self` (Python's `self.a1 = "x1"` on a subclass instance),
  // read by name as str() writes its value; nullopt when `self` has none (hasattr false). DebugMode's
  // record_tensor_attributes reads it. By default none.
  virtual std::optional<std::string> attribute(const Tensor& self, std::string_view name) const {
    (void)self, (void)name;
    return std::nullopt;
  }

  // __torch_function__ (Note [A subclass takes function calls]): runs for a front-end call with this
  // tensor among its arguments, only in a payload constructed with TakesFunctionCalls. Same protocol
  // as FunctionMode::torch_function, plus return_not_implemented() to let the next subclass try. The
  // default is PyTorch's _disabled_torch_function_impl: such a payload is never asked.
  virtual void torch_function(FunctionCall& call);
  bool takes_function_calls() const { return takes_function_calls_; }

 protected:
  struct TakesFunctionCalls {};
  explicit TensorSubclass(TakesFunctionCalls);

 private:
  struct VersionCounter : RefCounted<VersionCounter> {
    static void* operator new(std::size_t bytes) { return pool::allocate(bytes); }
    static void operator delete(void* p, std::size_t bytes) noexcept { pool::deallocate(p, bytes); }
    std::atomic<std::uint32_t> value{0};
  };
  VersionCounter& counter() const;  // made on first use
  // Holds a reference once made (Note [A wrapper's version counter is made on first use]).
  mutable std::atomic<VersionCounter*> version_{nullptr};
  bool takes_function_calls_ = false;
};

// Note [A subclass takes function calls]
// PyTorch's handle_torch_function for a subclass that overrides __torch_function__: a payload built
// with the TakesFunctionCalls constructor has its torch_function() called for every announced
// front-end call (ops/torch_function.h) that has one of its tensors among the arguments (a
// Tensor? too), after the function modes (a mode's call_through() reaches it, as upstream's
// `func(*args)` in a mode does) and before the function decomposes into dispatched ops. The
// subclasses among the arguments are tried in Note [Who handles an op]'s order (a derived type
// before its base); return_not_implemented() passes to the next, and when all return it the call
// fails with upstream's "no implementation found" error. While a hook runs, subclass hooks are
// disabled on the thread (DisableSubclassFunctions, upstream's DisableTorchFunctionSubclass that
// its default __torch_function__ enters), so its own calls and call_through() run the function
// itself, which dispatches to the subclass's dispatch(). A payload without the tag costs nothing:
// the live payloads with it count in Note [One test per call].

// TensorSubclass::type_includes for a type `Self`: false when `self` is of a type derived from Self
// that did not override it (rather than claim a relation it cannot see).
template <typename Self>
bool type_includes_as(const TensorSubclass& self, const TensorSubclass& other) {
  return typeid(self) == typeid(Self) && dynamic_cast<const Self*>(&other) != nullptr;
}

// A wrapper subclass's unwrap and rewrap (PyTorch's tree_map over args and over the result): call
// `fn(Tensor&)` on each tensor slot among the op's arguments on `stack`, or among its returns once
// `op.call(stack)` has left them there, tensor-list elements included and undefined tensors too. `fn`
// may replace the tensor in place.
template <typename Fn>
void for_each_argument_tensor(const OperatorHandle& op, Stack& stack, Fn&& fn);
template <typename Fn>
void for_each_return_tensor(const OperatorHandle& op, Stack& stack, Fn&& fn);

// PyTorch's torch.Tensor._make_wrapper_subclass: a storage-less tensor with the given metadata whose
// ops go to `subclass`. Use autograd's requires_grad_() to make it require grad.
Tensor make_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                           std::int64_t storage_offset, ScalarType dtype, Device device);

// PyTorch's isTensorSubclassLike: a wrapper subclass, or any tensor while a dispatch mode is on.
// Composite code that would act in place on plain tensors acts out of place on these (linear's bias,
// the engine's gradient accumulation), so a mode or subclass sees a functional op.
bool is_tensor_subclass_like(const Tensor& t);

// True when an op on `t` would reach the interposer: a mode is active or `t` is a wrapper, and the
// Python key is not excluded. PyTorch's shallow_copy_and_detach asks the same question.
bool interposer_sees(const Tensor& t);

// Registers the interposer's boxed fallback at the Python key, once; the first mode or wrapper
// tensor does it (Note [Registration on first use]).
void register_interposer();

namespace detail {
// Note [A call's subclasses are borrowed where their tensors are]
// The interposer finds the subclasses among an op's arguments on every op on a wrapper; a reference
// counted to each payload found cost two atomic operations per op. A payload found in a borrowed
// argument slot (Note [Borrowed tensor arguments]) needs none: the caller's tensor holds its
// TensorImpl, and the impl its payload, for the whole call (a payload is set when its impl is made
// and never replaced on a tensor anyone holds), and a handler cannot write the caller's tensor
// through the slot (a mutable Tensor& from it is an owned copy). A payload found in an owned slot (a
// boxed caller's value, an element of a tensor list) may die when a handler overwrites that slot
// with its returns while it still runs, so that entry holds a reference for the call.
struct OverloadedSubclass {
  OverloadedSubclass(TensorSubclass* s, bool borrowed) : payload(s), kept(borrowed ? nullptr : IntrusivePtr<TensorSubclass>(s)) {}
  TensorSubclass* operator->() const { return payload; }
  TensorSubclass* payload;
  IntrusivePtr<TensorSubclass> kept;  // null when the argument slot's owner keeps the payload alive
};
// The subclasses that handle a call, in the order they are tried (Note [Who handles an op]).
using Subclasses = SmallVector<OverloadedSubclass, 4>;
// Adds `s`'s type to `out` unless a payload of that type is already there: before the first type
// it derives from, else last. `borrowed`: `s` was found in a borrowed slot, so no reference is taken.
void add_overloaded_subclass(Subclasses& out, TensorSubclass* s, bool borrowed = false);
// Whether the handler that just ran called return_not_implemented(); clears it.
bool take_not_implemented();
// Clears the not-implemented mark before a handler runs.
void reset_not_implemented();

template <typename Fn>
void for_each_tensor_slot(Stack& stack, std::size_t count, Fn& fn) {
  for (std::size_t i = stack.size() - count; i < stack.size(); ++i) {
    IValue& v = stack[i];
    if (v.is_tensor()) fn(v.to_tensor());
    else if (v.is_tensor_list())
      for (Tensor& t : v.to_tensor_list()) fn(t);
  }
}
}  // namespace detail

template <typename Fn>
void for_each_argument_tensor(const OperatorHandle& op, Stack& stack, Fn&& fn) {
  detail::for_each_tensor_slot(stack, op.schema().arguments().size(), fn);
}

template <typename Fn>
void for_each_return_tensor(const OperatorHandle& op, Stack& stack, Fn&& fn) {
  detail::for_each_tensor_slot(stack, op.schema().returns().size(), fn);
}

}  // namespace strata
