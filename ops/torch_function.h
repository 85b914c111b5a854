// ops/torch_function.h: the one wrapper every public front-end function starts with. It announces
// the call to the function modes (core/interpose/function_mode.h) and to the subclasses among its arguments
// that take function calls (core/interpose/interposer.h) under PyTorch's name and parameter list, boxing the
// C++ arguments, and unboxes what they leave as the function's result.
//
//   Tensor mm(const Tensor& self, const Tensor& mat2) {
//     STRATA_TORCH_FUNCTION(mm, "torch.mm", "input, mat2", self, mat2);
//     ... the function itself ...
//   }
// and STRATA_TORCH_METHOD is its twin for a Tensor method (ops/tensor_methods.h).
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/interpose/function_mode.h"
#include "../core/generator.h"
#include "../core/interpose/interposer.h"
#include "../core/dispatch/ivalue.h"
#include "../core/tensor.h"

namespace strata {

struct TensorOptions;

namespace detail {

// Boxing a front-end argument: each overload appends the values it stands for, in the order of the
// signature's non-constant parameters. A type from elsewhere (nn's LossOptions) adds its own
// box_argument in its namespace, found by argument-dependent lookup.
inline void box_argument(std::vector<IValue>& out, const Tensor& t) {
  if (t.defined()) out.emplace_back(t);
  else out.emplace_back();  // an absent Tensor? argument is None, as PyTorch passes it
}
inline void box_argument(std::vector<IValue>& out, const Scalar& s) { out.emplace_back(s); }
inline void box_argument(std::vector<IValue>& out, TensorList v) { out.emplace_back(std::vector<Tensor>(v.begin(), v.end())); }
inline void box_argument(std::vector<IValue>& out, IntArrayRef v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, std::int64_t v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, int v) { out.emplace_back(static_cast<std::int64_t>(v)); }
inline void box_argument(std::vector<IValue>& out, double v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, bool v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, ScalarType v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, MemoryFormat v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, Device v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, std::string_view v) { out.emplace_back(v); }
inline void box_argument(std::vector<IValue>& out, const Generator* g) { out.emplace_back(g ? g->impl() : nullptr); }
void box_argument(std::vector<IValue>& out, const TensorOptions& options);  // dtype, device
template <typename T>
void box_argument(std::vector<IValue>& out, const std::optional<T>& v) {
  if (v) box_argument(out, *v);
  else out.emplace_back();
}

// Whether a front-end argument holds a tensor of a subclass that takes function calls (PyTorch's
// has_torch_function over the relevant args). Every type box_argument takes has an answer here: a
// Tensor or Tensor? is asked, the other types hold no tensor; a type from elsewhere holding tensors
// (nn's LossOptions) adds its own has_torch_function in its namespace.
inline bool has_torch_function(const Tensor& t) {
  return t.defined() && t.subclass() && t.subclass()->takes_function_calls();
}
template <typename T>
  requires(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, Scalar> ||
           std::is_same_v<T, IntArrayRef> || std::is_same_v<T, Device> || std::is_same_v<T, std::string_view> ||
           std::is_same_v<T, const Generator*> || std::is_same_v<T, Generator*> || std::is_same_v<T, TensorOptions>)
bool has_torch_function(const T&) {
  return false;
}
inline bool has_torch_function(TensorList list) {
  for (const Tensor& t : list)
    if (has_torch_function(t)) return true;
  return false;
}
template <typename T>
bool has_torch_function(const std::optional<T>& v) {
  return v && has_torch_function(*v);
}

// The second test of Note [One test per call]: does this call go to a handler?
template <typename... Args>
bool wants_torch_function(const Args&... args) {
  return function_modes_enabled() || (subclass_functions_enabled() && (has_torch_function(args) || ...));
}

// A result as a mode sees it, and back. A function returning several tensors gives a tensor list.
inline IValue box_result(const Tensor& t) { return t.defined() ? IValue(t) : IValue(); }
inline IValue box_result(std::vector<Tensor> r) { return IValue(std::move(r)); }  // split's pieces
template <typename... Ts>
IValue box_result(const std::tuple<Ts...>& r) {
  return IValue(std::apply([](const auto&... t) { return std::vector<Tensor>{t...}; }, r));
}

template <typename R>
struct UnboxResult;
template <>
struct UnboxResult<Tensor> {
  static Tensor get(const FunctionCall& call) {
    const IValue& v = call.result();
    if (v.is_none()) return Tensor();
    if (!v.is_tensor()) [[unlikely]] throw_bad_function_result(call, "a Tensor");
    return v.to_tensor();
  }
};
template <>
struct UnboxResult<std::vector<Tensor>> {  // a Tensor[] (split's pieces)
  static std::vector<Tensor> get(const FunctionCall& call) {
    const IValue& v = call.result();
    if (!v.is_tensor_list()) [[unlikely]] throw_bad_function_result(call, "a list of Tensors");
    return v.to_tensor_list();
  }
};
template <typename... Ts>
struct UnboxResult<std::tuple<Ts...>> {  // (Tensor, Tensor) or (Tensor, Tensor, Tensor)
  static std::tuple<Ts...> get(const FunctionCall& call) {
    constexpr std::size_t n = sizeof...(Ts);
    const IValue& v = call.result();
    if (!v.is_tensor_list() || v.to_tensor_list().size() != n) [[unlikely]]
      throw_bad_function_result(call, n == 2 ? "a list of 2 Tensors" : "a list of 3 Tensors");
    return take(v.to_tensor_list(), std::index_sequence_for<Ts...>{});
  }
  template <std::size_t... I>
  static std::tuple<Ts...> take(const std::vector<Tensor>& list, std::index_sequence<I...>) {
    return {list[I]...};
  }
};

template <typename First, typename... Rest>
const First& first_of(const First& first, const Rest&...) {
  return first;
}

// The slow path of STRATA_TORCH_FUNCTION: box, hand to the innermost mode or the subclasses, unbox.
// `through` re-enters the public function, which announces the call to the next mode out, then to
// the subclasses, and runs the function itself once no handler is left (Note [Function modes are
// popped while they run], Note [A subclass takes function calls]).
template <typename R, typename Through, typename... Args>
R handle_torch_function(const FunctionSignature& signature, Through& through, const Args&... args) {
  std::vector<IValue> boxed;
  boxed.reserve(signature.num_boxed);
  (box_argument(boxed, args), ...);
  FunctionCall call(signature, std::move(boxed));
  call.set_through(
      [](void* context, FunctionCall& c) {
        Through& fn = *static_cast<Through*>(context);
        if constexpr (std::is_void_v<R>) {
          fn();
          c.set_result(IValue());
        } else {
          c.set_result(box_result(fn()));
        }
      },
      &through);
  run_torch_function(call);
  if constexpr (std::is_void_v<R>) {
    return;
  } else if constexpr (std::is_reference_v<R>) {
    // An in-place function returns its first argument; a mode may run it or not, but cannot make it
    // return another tensor (C++ has nowhere to keep one).
    const Tensor& self = first_of(args...);
    const IValue& v = call.result();
    if (!v.is_tensor() || !v.to_tensor().is_same(self)) [[unlikely]]
      throw_bad_function_result(call, "its argument self (an in-place function returns its self)");
    return self;
  } else {
    return UnboxResult<R>::get(call);
  }
}

}  // namespace detail

}  // namespace strata

// The first statement of a public front-end function `function`: with a function mode enabled or a
// subclass that takes function calls among the arguments, announce the call as PyTorch's `name` with
// parameters `signature` (FunctionSignature) and the C++ arguments `...` (boxed in the signature's
// order), and return what the handlers leave. Otherwise one test of a counter (Note [One test per
// call]). `function` must be callable with `...` and resolve to the function itself (an overload set
// is fine).
#define STRATA_TORCH_FUNCTION(function, name, signature, ...)                                                   \
  do {                                                                                                          \
    if (::strata::detail::function_layer_in_use()) [[unlikely]]                                                 \
      if (::strata::detail::wants_torch_function(__VA_ARGS__))                                                  \
        return STRATA_COLD_LAMBDA->decltype(auto) {                                                             \
          static const ::strata::FunctionSignature strata_signature_(name, signature);                          \
          auto strata_through_ = [&]() -> decltype(auto) { return function(__VA_ARGS__); };                     \
          return ::strata::detail::handle_torch_function<decltype(function(__VA_ARGS__))>(strata_signature_,   \
                                                                                           strata_through_,     \
                                                                                           __VA_ARGS__);        \
        }();                                                                                                    \
  } while (0)

// Note [A method is announced as the method]
// PyTorch announces `x.sum()` as torch.Tensor.sum and `torch.sum(x)` as torch.sum: the method is
// its own function. A Tensor method whose free function has another name starts with this macro, so
// a handler sees the method (`method` in torch.Tensor, parameters `signature` starting with self,
// arguments `...` after *this); calling through re-enters the method. Its body then forwards to the
// free function, which announces nothing more: the body runs only once no mode is left on the stack
// and no subclass hook is enabled (a hook calls through with subclass hooks off), exactly when the
// free function's own test fails too (Note [One test per call]). A method whose free function
// already has the method's name (add_, fill_, contiguous, expand...) is a plain forward.
#define STRATA_TORCH_METHOD(method, signature, ...)                                                         \
  do {                                                                                                      \
    if (::strata::detail::function_layer_in_use()) [[unlikely]]                                            \
      if (::strata::detail::wants_torch_function(*this __VA_OPT__(, ) __VA_ARGS__))                        \
        return STRATA_COLD_LAMBDA->decltype(auto) {                                                         \
          static const ::strata::FunctionSignature strata_signature_("torch.Tensor." #method, signature);   \
          auto strata_through_ = [&]() -> decltype(auto) { return this->method(__VA_ARGS__); };             \
          return ::strata::detail::handle_torch_function<decltype(this->method(__VA_ARGS__))>(             \
              strata_signature_, strata_through_, *this __VA_OPT__(, ) __VA_ARGS__);                        \
        }();                                                                                                \
  } while (0)
