// ops/typed_operator.h: TypedOperator, what each front-end function holds: an op's handle, resolved
// once, and its unboxed CPU kernel of the schema's C++ signature. A call takes the unboxed fast path
// when it would run the CPU kernel and nothing else, and the boxed dispatcher path otherwise
// (Note [Unboxed fast path]).
#pragma once

#include <type_traits>

#include "../core/dispatch/dispatcher.h"
#include "op_table.h"

namespace strata {

namespace detail {
inline DispatchKeySet keys_of_argument(const Tensor& t) { return t.defined() ? t.key_set() : DispatchKeySet(); }
inline DispatchKeySet keys_of_argument(TensorList list) {
  DispatchKeySet keys;
  for (const Tensor& t : list) keys = keys | keys_of_argument(t);
  return keys;
}
inline DispatchKeySet keys_of_argument(const std::vector<Tensor>& list) { return keys_of_argument(TensorList(list)); }
inline DispatchKeySet keys_of_argument(const std::optional<Tensor>& t) { return t ? keys_of_argument(*t) : DispatchKeySet(); }
// Any other parameter holds no tensor. The union of these is every key the boxed path would read
// from the stack (Dispatcher::call with argument keys), so each way a signature may pass a tensor
// has its overload above.
template <typename T>
DispatchKeySet keys_of_argument(const T&) {
  return DispatchKeySet();
}
// Bit i set when argument i is an undefined Tensor.
inline bool is_undefined_tensor(const Tensor& t) { return !t.defined(); }
template <typename T>
bool is_undefined_tensor(const T&) {
  return false;
}
template <typename... P>
std::uint64_t undefined_tensors(const P&... args) {
  std::uint64_t mask = 0;
  unsigned i = 0;
  ((mask |= std::uint64_t{is_undefined_tensor(args)} << i++), ...);
  return mask;
}

// Tensors given by reference are pushed borrowed (Note [Borrowed tensor arguments]), an undefined
// tensor (an absent Tensor? argument) as None; anything else is boxed by value.
inline void push_argument(Stack& stack, const Tensor& t) {
  if (t.defined()) stack.emplace_back(IValue::Borrow{}, t);
  else stack.emplace_back();
}
inline void push_argument(Stack& stack, Tensor& t) { push_argument(stack, static_cast<const Tensor&>(t)); }
// A Tensor[] is boxed as a list that owns its tensors (IValue has no borrowed list).
inline void push_argument(Stack& stack, TensorList list) { stack.emplace_back(std::vector<Tensor>(list.begin(), list.end())); }
template <typename T>
void push_argument(Stack& stack, T&& value) {
  stack.emplace_back(std::forward<T>(value));
}

// Pushes the arguments, dispatches through the boxed path, and returns the single Tensor result.
template <typename... Args>
Tensor call_op(const OperatorHandle& op, Args&&... args) {
  Stack stack;
  (push_argument(stack, std::forward<Args>(args)), ...);
  op.call(stack);
  return std::move(stack.back()).to_tensor();
}
}  // namespace detail

template <typename Sig>
class TypedOperator;

template <typename R, typename... P>
class TypedOperator<R(P...)> {
 public:
  explicit TypedOperator(std::string_view qualified_name, std::string_view overload = "")
      : op_(ops::op(qualified_name, overload)), fast_(reinterpret_cast<R (*)(P...)>(Dispatcher::singleton().unboxed_cpu(op_, typeid(R(P...))))) {
    STRATA_INTERNAL_ASSERT(fast_ || !Dispatcher::singleton().has_unboxed_cpu(op_), "the front end of ", op_.str(),
                           " declares a signature its unboxed kernel does not have");
  }

  R operator()(P... args) const {
    const DispatchKeySet keys = (detail::keys_of_argument(args) | ... | DispatchKeySet());
    // An undefined Tensor where the schema requires one takes the boxed path, which reads the keys
    // from the stack and reports it there.
    const bool complete = !(detail::undefined_tensors(args...) & op_.entry().required_tensors());
    if (fast_ && complete && Dispatcher::runs_cpu_only(keys)) [[likely]] {
      try {
        return fast_(args...);
      } catch (Error& e) {
        Dispatcher::name_error(e, op_);
        throw;
      }
    }
    Stack stack;
    (detail::push_argument(stack, args), ...);
    if (complete) Dispatcher::call(op_, keys, stack);
    else op_.call(stack);
    if constexpr (!std::is_void_v<R>) return std::move(stack.back()).to_tensor();
  }

  const OperatorHandle& handle() const { return op_; }

 private:
  OperatorHandle op_;
  R (*fast_)(P...);
};

}  // namespace strata
