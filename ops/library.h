// ops/library.h: custom ops from user code, PyTorch's TORCH_LIBRARY / TORCH_LIBRARY_IMPL
// (torch/library.h). A Library defines schemas in its namespace and registers typed C++ kernels for
// them at any key (CPU, Meta, Autograd, Python); the op then dispatches like strata's own ops, so
// modes see "myops.scale.default" and the dispatch trace shows it. Kernels are checked against the
// schema when they are registered; a call that reaches a key without a kernel gets the dispatcher's
// "Could not run" error.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "../core/dispatch/dispatcher.h"
#include "boxing.h"

namespace strata {

namespace ops {
// A kernel may take a Tensor by value.
template <>
struct Unbox<Tensor> {
  static const Tensor& get(const IValue& v) { return Unbox<const Tensor&>::get(v); }
};
}  // namespace ops

namespace library_detail {

// What a kernel's C++ parameter (or return) type means in a schema.
struct KernelType {
  SchemaType::Kind kind;
  bool optional;
  bool list;
  const char* cpp;  // for the error message: "double"
};
template <typename T>
struct KernelTypeOf {
  static_assert(sizeof(T) == 0,
                "a Library kernel's parameters are const Tensor&, double, std::int64_t, bool, Scalar, IntArrayRef, "
                "ScalarType, Device or std::optional of one of these; it returns Tensor or std::tuple<Tensor, ...>");
};
template <> struct KernelTypeOf<const Tensor&> { static constexpr KernelType value{SchemaType::Kind::Tensor, false, false, "const Tensor&"}; };
template <> struct KernelTypeOf<Tensor> { static constexpr KernelType value{SchemaType::Kind::Tensor, false, false, "Tensor"}; };
template <> struct KernelTypeOf<double> { static constexpr KernelType value{SchemaType::Kind::Float, false, false, "double"}; };
template <> struct KernelTypeOf<std::int64_t> { static constexpr KernelType value{SchemaType::Kind::Int, false, false, "std::int64_t"}; };
template <> struct KernelTypeOf<bool> { static constexpr KernelType value{SchemaType::Kind::Bool, false, false, "bool"}; };
template <> struct KernelTypeOf<Scalar> { static constexpr KernelType value{SchemaType::Kind::Scalar, false, false, "Scalar"}; };
template <> struct KernelTypeOf<IntArrayRef> { static constexpr KernelType value{SchemaType::Kind::Int, false, true, "IntArrayRef"}; };
template <> struct KernelTypeOf<ScalarType> { static constexpr KernelType value{SchemaType::Kind::ScalarType, false, false, "ScalarType"}; };
template <> struct KernelTypeOf<Device> { static constexpr KernelType value{SchemaType::Kind::Device, false, false, "Device"}; };
template <typename T>
struct KernelTypeOf<std::optional<T>> {
  static constexpr KernelType value{KernelTypeOf<T>::value.kind, true, KernelTypeOf<T>::value.list, "std::optional<...>"};
};

// Throws if the kernel's parameter and return types do not spell the schema (library.cpp).
void check_signature(const OperatorHandle& op, DispatchKey key, std::span<const KernelType> params,
                     std::span<const KernelType> returns);

template <typename R>
struct ReturnTypes {
  static constexpr std::array<KernelType, 1> value{KernelTypeOf<R>::value};
};
template <typename... R>
struct ReturnTypes<std::tuple<R...>> {
  static constexpr std::array<KernelType, sizeof...(R)> value{KernelTypeOf<R>::value...};
};

inline void push_result(Stack& stack, Tensor&& t) { stack.emplace_back(std::move(t)); }
template <typename... R>
void push_result(Stack& stack, std::tuple<R...>&& results) {
  std::apply([&](auto&... t) { (stack.emplace_back(std::move(t)), ...); }, results);
}

// The boxed form of a typed kernel: unboxes the schema's arguments as Fn's parameter types, calls it,
// and replaces the arguments with its results. A CPU kernel first refuses tensors without data.
template <auto Fn, DispatchKey Key>
void boxed_kernel(const OperatorHandle& op, DispatchKeySet, Stack& stack) {
  constexpr std::size_t n = ops::FnTraits<decltype(Fn)>::arity;
  const IValue* args = stack.data() + stack.size() - n;
  if constexpr (Key == DispatchKey::CPU) ops::detail::check_cpu_inputs(op, args);
  auto result = ops::detail::invoke_unboxed<Fn>(Fn, args, std::make_index_sequence<n>{});
  stack.truncate(stack.size() - n);
  push_result(stack, std::move(result));
}

template <auto Fn, typename Args = typename ops::FnTraits<decltype(Fn)>::Args>
struct ParamTypes;
template <auto Fn, typename... A>
struct ParamTypes<Fn, std::tuple<A...>> {
  static constexpr std::array<KernelType, sizeof...(A)> value{KernelTypeOf<A>::value...};
};

}  // namespace library_detail

// Note [A user kernel is a template argument]
// A boxed kernel is a plain function pointer (BoxedKernelFn): the hot path loads it from the op's
// table and calls it, with no closure to find. So impl<&fn> takes the kernel as a template argument and
// instantiates one boxed adapter per kernel (library_detail::boxed_kernel), as ops/boxing.h does for
// strata's own rows; a CPU kernel returning one Tensor is also registered unboxed, so a front end's
// TypedOperator takes the same fast path as aten's ops (Note [Unboxed fast path]). The adapter is
// checked against the schema once, at registration: each parameter and return type must spell the
// schema's type (KernelTypeOf), so the boxed call can never unbox a value as the wrong type.

// Note [A user kernel is registered once]
// PyTorch lets a later registration override a kernel (with a warning). strata refuses it: a front
// end's TypedOperator resolves an op's unboxed CPU kernel once, so an override would reach the boxed
// path but not front ends that already ran, and the two paths would disagree silently.

// A namespace of user ops:
//   Library m("myops");
//   m.def("scale(Tensor x, float s) -> Tensor");
//   m.impl<&scale_cpu>("scale", DispatchKey::CPU);      // Tensor scale_cpu(const Tensor& x, double s)
//   m.impl<&scale_meta>("scale", DispatchKey::Meta);
//   m.impl<&scale_autograd>("scale", DispatchKey::Autograd);
// Then `TypedOperator<Tensor(const Tensor&, double)> op("myops::scale")` calls it (with the unboxed
// fast path when only the CPU kernel would run), as strata's front ends call theirs.
class Library {
 public:
  explicit Library(std::string_view ns);

  // Defines an op from its schema, "scale(Tensor x, float s) -> Tensor" (a "myops::" prefix is
  // allowed). A second definition of the same name and overload is an error.
  OperatorHandle def(std::string_view schema);

  // Registers `Fn`, a plain function whose parameters and returns spell the schema's, as the op's
  // kernel at `key` ("scale" or "scale.overload"). A key takes one kernel per op (a second is refused,
  // Note [A user kernel is registered once]), and Python none: that key is the interposer's. A kernel at Autograd
  // runs when an argument requires grad; it records through Function<T> (autograd/custom_function.h),
  // whose forward calls the op again below Autograd (ExcludeKeyGuard(DispatchKey::Autograd)).
  template <auto Fn>
  Library& impl(std::string_view name, DispatchKey key) {
    using Traits = ops::FnTraits<decltype(Fn)>;
    const OperatorHandle op = find(name);
    library_detail::check_signature(op, key, library_detail::ParamTypes<Fn>::value,
                                    library_detail::ReturnTypes<typename Traits::Return>::value);
    register_kernel(op, key, boxed_for<Fn>(key));
    if constexpr (std::is_same_v<typename Traits::Return, Tensor>) {
      if (key == DispatchKey::CPU) Dispatcher::singleton().register_unboxed_cpu(op, Fn);
    }
    return *this;
  }
  // A boxed kernel (any BoxedKernelFn), for kernels that handle the stack themselves.
  Library& impl_boxed(std::string_view name, DispatchKey key, BoxedKernelFn fn);

  const std::string& ns() const { return ns_; }

 private:
  template <auto Fn>
  static BoxedKernelFn boxed_for(DispatchKey key) {
    switch (key) {
      case DispatchKey::CPU: return &library_detail::boxed_kernel<Fn, DispatchKey::CPU>;
      case DispatchKey::Meta: return &library_detail::boxed_kernel<Fn, DispatchKey::Meta>;
      case DispatchKey::Python: break;  // refused by register_kernel
      case DispatchKey::Autograd: return &library_detail::boxed_kernel<Fn, DispatchKey::Autograd>;
    }
    return nullptr;
  }
  // "scale" or "scale.overload" in this namespace; an error naming what is defined otherwise.
  OperatorHandle find(std::string_view name) const;
  // Registers `fn` at `key` (not Python) under the name dump_table and the trace print, "myops::scale (CPU)".
  void register_kernel(const OperatorHandle& op, DispatchKey key, BoxedKernelFn fn);

  std::string ns_;
};

}  // namespace strata
