// ops/torch_function.h: the one wrapper every public front-end function starts with. It announces
// the call to the function modes (core/function_mode.h) under PyTorch's name and parameter list,
// boxing the C++ arguments, and unboxes what the modes leave as the function's result.
//
//   Tensor mm(const Tensor& self, const Tensor& mat2) {
//     STRATA_TORCH_FUNCTION(mm, "torch.mm", "input, mat2", self, mat2);
//     ... the function itself ...
//   }
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/function_mode.h"
#include "core/generator.h"
#include "core/ivalue.h"
#include "core/tensor.h"

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

// A result as a mode sees it, and back. A function returning several tensors gives a tensor list.
inline IValue box_result(const Tensor& t) { return t.defined() ? IValue(t) : IValue(); }
inline IValue box_result(const std::tuple<Tensor, Tensor>& r) {
  return IValue(std::vector<Tensor>{std::get<0>(r), std::get<1>(r)});
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
struct UnboxResult<std::tuple<Tensor, Tensor>> {
  static std::tuple<Tensor, Tensor> get(const FunctionCall& call) {
    const IValue& v = call.result();
    if (!v.is_tensor_list() || v.to_tensor_list().size() != 2) [[unlikely]]
      throw_bad_function_result(call, "a list of 2 Tensors");
    return {v.to_tensor_list()[0], v.to_tensor_list()[1]};
  }
};

template <typename First, typename... Rest>
const First& first_of(const First& first, const Rest&...) {
  return first;
}

// The slow path of STRATA_TORCH_FUNCTION: box, hand to the innermost mode, unbox. `through` re-enters
// the public function, which announces the call to the next mode out, or runs the function itself
// once no mode is left (Note [Function modes are popped while they run]).
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
  run_function_mode(call);
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

// The first statement of a public front-end function `function`: with a function mode enabled,
// announce the call as PyTorch's `name` with parameters `signature` (FunctionSignature) and the C++
// arguments `...` (boxed in the signature's order), and return what the modes leave. Otherwise one
// thread-local test (Note [One thread-local test per call]). `function` must be callable with `...`
// and resolve to the function itself (an overload set is fine).
#define STRATA_TORCH_FUNCTION(function, name, signature, ...)                                                   \
  do {                                                                                                          \
    if (::strata::function_modes_enabled()) [[unlikely]]                                                        \
      return STRATA_COLD_LAMBDA->decltype(auto) {                                                               \
        static const ::strata::FunctionSignature strata_signature_(name, signature);                            \
        auto strata_through_ = [&]() -> decltype(auto) { return function(__VA_ARGS__); };                       \
        return ::strata::detail::handle_torch_function<decltype(function(__VA_ARGS__))>(strata_signature_,     \
                                                                                         strata_through_,       \
                                                                                         __VA_ARGS__);          \
      }();                                                                                                      \
  } while (0)
