// ops/boxing.h: turning typed C++ functions into boxed kernels, so each op is written as readable
// typed functions (MLX-style: a meta function validates and computes output metadata, a CPU function
// only computes) and registered as one row. Four shapes of op are covered:
//   functional  meta(args) -> TensorSpec (or array of them); cpu(outs..., args)     new output(s)
//   view        geometry(args) -> ViewSpec                                           alias of args[0]
//   in-place    check(args); cpu(args); bumps args[0]'s version                    returns args[0]
//   boxed       any BoxedKernelFn, for ops that fit none of these (record_function)
// The Meta kernel of every row is derived from the same meta/geometry/check function as the CPU
// kernel, so the two always agree on shapes, dtypes and errors.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/autograd_meta.h"
#include "../core/dispatch/dispatcher.h"
#include "../core/generator.h"
#include "../core/dispatch/ivalue.h"
#include "compute_in_float.h"

namespace strata::ops {

// The metadata of a new output. Empty strides mean contiguous. An output of an input's shape (most
// pointwise outputs) names that input instead of copying its sizes: the input outlives the spec
// (it is an argument of the call that allocates), and a tiny op skips building and copying a shape.
struct TensorSpec {
  DimVector sizes;
  ScalarType dtype;
  DimVector strides;
  // When set, sizes is empty and the output has this tensor's shape. A class with its own default
  // constructor rather than a pointer defaulting to null: for a null pointer member GCC 12 clears the
  // whole ~150-byte spec with a call to memset before filling it, in every meta function.
  struct ShapeSource {
    ShapeSource() noexcept : tensor(nullptr) {}
    ShapeSource(const Tensor* t) noexcept : tensor(t) {}  // NOLINT: implicit, for {sizes, dtype, strides, &self}
    const Tensor* tensor;
  };
  ShapeSource shape_of;

  IntArrayRef shape() const { return shape_of.tensor ? shape_of.tensor->sizes() : IntArrayRef(sizes); }
};

// What autograd sees in a view op's output (Note [Every view of a float tensor is tracked]): a
// differentiable view (t, view, expand...: its schema's return aliases self), or an untracked one
// (detach, whose output PyTorch makes a non-differentiable view; _unsafe_view, which is no view to
// autograd).
enum class ViewKind { Differentiable, Untracked };

// The geometry of a view of the first argument.
struct ViewSpec {
  DimVector sizes;
  DimVector strides;
  std::int64_t storage_offset;
};
// Note [Views copy a geometry they keep]
// What a view op returns when its output has the first argument's own geometry (detach), or that
// geometry with two dimensions swapped (t, transpose): the view copies it, with its numel (and its
// contiguity, for detach), instead of building a ViewSpec and recomputing both from it. These are a
// training step's commonest views (t of every weight, forward and backward; the detaches of
// AccumulateGrad and of saved outputs). view keeps its input's numel the same way (Note [A view's
// contiguity], core/tensor_impl.cpp).
struct SameGeometry {};
struct SwappedDims {
  std::size_t dim0, dim1;  // in range, or both 0 for a 0-d input
};

// A new output of `spec`'s geometry. Always inline: every functional op's output comes from here, and
// out of line the boxed kernels would pass the spec through memory.
[[gnu::always_inline]] inline Tensor allocate(TensorSpec&& spec, Device device) {
  if (spec.strides.empty()) [[likely]] {
    if (spec.shape_of.tensor) return Tensor(TensorImpl::make_contiguous_like(*spec.shape_of.tensor->impl(), spec.dtype, device));
    return Tensor(TensorImpl::make_contiguous(spec.sizes, spec.dtype, device));
  }
  return strata::detail::make_tensor(spec.shape(), spec.strides, spec.dtype, device);
}

// ---- unboxing: IValue -> the C++ parameter type --------------------------------------------------
// A parameter of type T is read by the IValue accessor that returns T (to_int for std::int64_t,
// to_scalar for Scalar, ...); the three types no accessor returns are handled first.
template <typename T, auto Accessor, auto... Rest>
T call_accessor_returning(const IValue& v) {
  if constexpr (std::is_same_v<std::invoke_result_t<decltype(Accessor), const IValue&>, T>) {
    return (v.*Accessor)();
  } else {
    static_assert(sizeof...(Rest) > 0, "a kernel parameter of a type no schema argument unboxes to");
    if constexpr (sizeof...(Rest) > 0) return call_accessor_returning<T, Rest...>(v);
  }
}

template <typename T>
struct Unbox {
  static T get(const IValue& v) {
    if constexpr (std::is_same_v<T, const Tensor&>) {  // Tensor and Tensor? (None becomes an undefined tensor)
      return v.is_none() ? strata::detail::undefined_tensor : v.to_tensor();
    } else if constexpr (std::is_same_v<T, TensorList>) {  // Tensor[]: a view of the list the IValue holds
      const std::vector<Tensor>& list = v.to_tensor_list();
      return TensorList(list.data(), list.size());
    } else if constexpr (std::is_same_v<T, Layout>) {  // strided is the only layout
      return Layout::Strided;
    } else {
      return call_accessor_returning<T, &IValue::to_scalar, &IValue::to_int, &IValue::to_double, &IValue::to_bool,
                                     &IValue::to_int_list, &IValue::to_scalar_type, &IValue::to_device,
                                     &IValue::to_memory_format, &IValue::to_generator, &IValue::to_string_view>(v);
    }
  }
};
template <typename T>
struct Unbox<std::optional<T>> {
  static std::optional<T> get(const IValue& v) {
    if (v.is_none()) return std::nullopt;
    return Unbox<T>::get(v);
  }
};

template <typename F>
struct FnTraits;
template <typename R, typename... A>
struct FnTraits<R (*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
  static constexpr std::size_t arity = sizeof...(A);
};

namespace detail {

// Calls fn(outs..., args...) with args unboxed as the parameter types of `Sig` (the op's meta,
// geometry or check function, whose parameters are exactly the schema's arguments).
template <auto Sig, typename Fn, std::size_t... I, typename... Outs>
decltype(auto) invoke_unboxed(const Fn& fn, const IValue* args, std::index_sequence<I...>, const Outs&... outs) {
  using Args = typename FnTraits<decltype(Sig)>::Args;
  return fn(outs..., Unbox<std::tuple_element_t<I, Args>>::get(args[I])...);
}

template <auto Sig>
constexpr std::size_t arity = FnTraits<decltype(Sig)>::arity;

// The arguments unboxed once, as the parameter types of `Sig` (references stay references): a
// functional or in-place kernel hands the same values to its meta (or check) and compute functions.
template <auto Sig, std::size_t... I>
typename FnTraits<decltype(Sig)>::Args unbox_arguments(const IValue* args, std::index_sequence<I...>) {
  using Args = typename FnTraits<decltype(Sig)>::Args;
  return Args(Unbox<std::tuple_element_t<I, Args>>::get(args[I])...);
}

template <typename T>
struct SpecCount : std::integral_constant<std::size_t, 1> {};
template <std::size_t N>
struct SpecCount<std::array<TensorSpec, N>> : std::integral_constant<std::size_t, N> {};

// CPU kernels read data: a tensor without any (a wrapper reached with the Python key excluded, or
// its view: Note [A view keeps its source's keys]) is an error, not a null dereference. Meta outranks
// CPU, so meta tensors never get here. The check is inline (every boxed CPU call makes it); the error
// is reported out of line.
[[noreturn]] void throw_no_cpu_data(const OperatorHandle& op, std::size_t position, const Tensor& t);
// The elements of a Tensor[] argument (cat, stack) are checked the same way, out of line.
void check_cpu_list_input(const OperatorHandle& op, std::size_t position, const IValue& list);
inline void check_cpu_inputs(const OperatorHandle& op, const IValue* args) {
  for (std::uint8_t i : op.entry().tensor_arguments()) {
    if (!args[i].is_tensor()) {
      if (args[i].is_tensor_list()) [[unlikely]] check_cpu_list_input(op, i, args[i]);
      continue;
    }
    const Tensor& t = args[i].to_tensor();
    if (t.defined() && !t.impl()->has_data()) [[unlikely]] throw_no_cpu_data(op, i, t);
  }
}

// Note [Meta kernels read and write no data]
// A Meta kernel computes shapes. It meets a tensor with data only where a CPU tensor is mixed with one
// whose backend is Meta and the dispatcher's device check let them through: a cpu 0-d tensor (a
// scalar, which mixes with any device), copy_ (which may mix devices), or a fake, which reports cpu
// while its kernels are the meta ones (Note [A meta tensor may report another device]). The last is
// an error, as upstream's is (its fake reads as meta inside a kernel, so its device check names cpu
// and meta): a functional Meta kernel refuses an input with data of one or more dimensions, and an
// in-place one a self with data, whose write it would silently skip. Only a call whose keys hold CPU
// (some argument is a CPU tensor) can meet data, so the checks cost a meta-only call one test.
[[noreturn]] void throw_meta_meets_data();
inline void check_meta_inputs(const OperatorHandle& op, const IValue* args) {
  for (std::uint8_t i : op.entry().tensor_arguments()) {
    if (!args[i].is_tensor()) continue;
    const Tensor& t = args[i].to_tensor();
    if (t.impl()->has_data() && t.dim() != 0) [[unlikely]] throw_meta_meets_data();
  }
}

// Replaces a kernel's `n` arguments, already read, at the end of `stack` with its outputs. With no
// more outputs than arguments (every op here) the outputs take the argument slots in place: no
// capacity check, and no call to the stack's out-of-line emplace_back.
template <std::size_t n, std::size_t k>
void replace_arguments(Stack& stack, std::array<Tensor, k>&& outs) {
  if constexpr (k <= n) {
    IValue* slots = stack.data() + stack.size() - n;
    for (std::size_t i = 0; i < k; ++i) slots[i] = IValue(std::move(outs[i]));
    stack.truncate(stack.size() - (n - k));
  } else {
    stack.truncate(stack.size() - n);
    for (Tensor& t : outs) stack.emplace_back(std::move(t));
  }
}

// CPU and Meta kernels of a functional op.
template <auto Meta, auto Compute, Device D>
void functional_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  constexpr std::size_t n = arity<Meta>;
  const IValue* args = stack.data() + stack.size() - n;
  if constexpr (D == Device::CPU) check_cpu_inputs(op, args);
  else if (keys.has(DispatchKey::CPU)) [[unlikely]] check_meta_inputs(op, args);
  const auto unboxed = unbox_arguments<Meta>(args, std::make_index_sequence<n>{});
  auto spec = std::apply(Meta, unboxed);
  constexpr std::size_t k = SpecCount<std::decay_t<decltype(spec)>>::value;
  std::array<Tensor, k> outs;
  if constexpr (k == 1) outs[0] = allocate(std::move(spec), D);
  else for (std::size_t i = 0; i < k; ++i) outs[i] = allocate(std::move(spec[i]), D);
  if constexpr (D == Device::CPU) {
    std::apply([&](const auto&... a) {
      if constexpr (!kComputesReducedFloat<Compute>) {
        const bool reduced_out = std::apply([](const auto&... o) { return any_reduced_argument(o...); }, outs);
        if (reduced_out || any_reduced_argument(a...)) [[unlikely]]
          return compute_in_float<Compute>(outs, a...);  // Note [float16 and bfloat16 compute in float]
      }
      std::apply([&](const auto&... o) { Compute(o..., a...); }, outs);
    }, unboxed);
  }
  replace_arguments<n>(stack, std::move(outs));
}

Tensor make_view_of(const Tensor& base, const ViewSpec& spec);
// A differentiable view's schema returns an alias of its first argument that it does not write.
void check_differentiable_view_schema(const OperatorHandle& op);
inline Tensor make_view_of(const Tensor& base, SameGeometry) { return strata::detail::make_alias(base); }
inline Tensor make_view_of(const Tensor& base, SwappedDims d) { return strata::detail::make_transposed(base, d.dim0, d.dim1); }

template <auto Geometry, ViewKind Kind>
void view_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  constexpr std::size_t n = arity<Geometry>;
  const IValue* args = stack.data() + stack.size() - n;
  auto spec = invoke_unboxed<Geometry>(Geometry, args, std::make_index_sequence<n>{});  // ViewSpec, SameGeometry or SwappedDims
  std::array<Tensor, 1> out{make_view_of(args[0].to_tensor(), std::move(spec))};
  if constexpr (Kind == ViewKind::Differentiable) track_view(args[0].to_tensor(), out[0]);
  replace_arguments<n>(stack, std::move(out));
}

// An in-place kernel's compute function, with float16 and bfloat16 arguments widened unless it takes them
// (Note [float16 and bfloat16 compute in float]).
template <auto Compute>
struct InplaceCompute {
  template <typename... A>
  static void run(const A&... args) {
    if constexpr (!kComputesReducedFloat<Compute>) {
      if (any_reduced_argument(args...)) [[unlikely]] return compute_inplace_in_float<Compute>(args...);
    }
    Compute(args...);
  }
};

template <auto Check, auto Compute, Device D>
void inplace_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  constexpr std::size_t n = arity<Check>;
  const IValue* args = stack.data() + stack.size() - n;
  if constexpr (D == Device::CPU) check_cpu_inputs(op, args);
  const auto unboxed = unbox_arguments<Check>(args, std::make_index_sequence<n>{});
  std::apply(Check, unboxed);
  if constexpr (D == Device::CPU) std::apply([](const auto&... a) { InplaceCompute<Compute>::run(a...); }, unboxed);
  else if (keys.has(DispatchKey::CPU) && args[0].to_tensor().impl()->has_data()) [[unlikely]] throw_meta_meets_data();
  args[0].to_tensor().impl()->bump_version();  // a meta tensor counts the write it did not do
  replace_arguments<n>(stack, std::array<Tensor, 1>{args[0].to_tensor()});
}

// The unboxed CPU forms (Note [Unboxed fast path]): the same meta and compute, called with typed
// arguments. Each is a Body run through WithParameters, whose call() has exactly the parameter list of
// the meta (or geometry, or check) function, so the signature is the schema's.
template <typename Body, typename Args>
struct WithParameters;
template <typename Body, typename... A>
struct WithParameters<Body, std::tuple<A...>> {
  static decltype(auto) call(A... args) { return Body::run(args...); }
};
template <typename Body, auto Sig>
inline constexpr auto unboxed_cpu = &WithParameters<Body, typename FnTraits<decltype(Sig)>::Args>::call;

template <auto Meta, auto Compute>
struct FunctionalBody {
  template <typename... A>
  static Tensor run(const A&... args) {
    Tensor out = allocate(Meta(args...), Device::CPU);
    if constexpr (!kComputesReducedFloat<Compute>) {
      if (any_reduced_argument(out, args...)) [[unlikely]] {
        compute_in_float<Compute>(std::array<Tensor, 1>{out}, args...);  // Note [float16 and bfloat16 compute in float]
        return out;
      }
    }
    Compute(out, args...);
    return out;
  }
};
template <auto Geometry, ViewKind Kind>
struct ViewBody {
  template <typename Base, typename... A>
  static Tensor run(const Base& base, const A&... args) {
    Tensor out = make_view_of(base, Geometry(base, args...));
    if constexpr (Kind == ViewKind::Differentiable) track_view(base, out);
    return out;
  }
};
template <auto Check, auto Compute>
struct InplaceBody {
  template <typename Self, typename... A>
  static void run(const Self& self, const A&... args) {
    Check(self, args...);
    InplaceCompute<Compute>::run(self, args...);
    self.impl()->bump_version();
  }
};

}  // namespace detail

// ---- rows -----------------------------------------------------------------------------------------
// Note [A row holds its op's facts]
// An op is written in two places: its meta and CPU functions in ops/native/<family>.cpp, and its row
// in ops/native/<family>.yaml beside it, as PyTorch's native_functions.yaml holds its rows:
//   - func: silu(Tensor self) -> Tensor         the schema, copied from native_functions.yaml
//     functional: silu_meta, silu_cpu           the kernels: functional (meta, CPU), inplace (check,
//                                               CPU) or view (geometry; `untracked: true` for a view
//                                               autograd treats as a new tensor)
//     front_end: torch.nn.functional.silu       how users call it (below)
// Everything else about the op is derived from the row. scripts/gen-ops writes, at build time, the
// family's register_<family>() (calls of the def_* below) and the front-end functions; checked in,
// their declarations (ops/generated/functions.h), the golden op list (tests/golden/schemas.txt) and
// the op index (docs/ops.md). At registration, the kernels' display name ("kernel relu" in a dispatch
// trace) and the autograd node's name come from the schema. The front end is one of:
//   a torch name ("torch.sigmoid")   a generated function that announces itself to function modes
//                                    under that name; its parameters are the schema's, with `self`
//                                    named `input` unless the name is a method ("torch.Tensor.add_");
//                                    `python_params:` overrides them
//   internal                         a generated function that announces nothing (ops PyTorch exposes
//                                    as no torch function: the *_backward ops)
//   manual                           nothing generated: the front end is written in ops/functions.cpp
//                                    (factories with TensorOptions, ops with two outputs, C++ defaults
//                                    the schema does not have)
// Rows are data, not code, because everything in them is read by more than the compiler (the
// generator, the docs, the reference scripts' op names), while the kernels they name are still
// checked by it: a row naming a function that does not exist does not build, and a front end whose
// schema-derived signature differs from its kernel's fails when first called (TypedOperator).

template <auto Meta, auto Compute>
OperatorHandle def_functional(Dispatcher& d, std::string_view ns, std::string_view schema) {
  const OperatorHandle op = d.def(ns, schema, KernelFunction{&detail::functional_kernel<Meta, Compute, Device::CPU>},
                                  KernelFunction{&detail::functional_kernel<Meta, Compute, Device::Meta>, "meta"});
  if constexpr (std::is_same_v<typename FnTraits<decltype(Meta)>::Return, TensorSpec>)
    d.register_unboxed_cpu(op, detail::unboxed_cpu<detail::FunctionalBody<Meta, Compute>, Meta>);
  return op;
}

template <auto Geometry, ViewKind Kind = ViewKind::Differentiable>
OperatorHandle def_view(Dispatcher& d, std::string_view ns, std::string_view schema) {
  const OperatorHandle op = d.def(ns, schema, KernelFunction{&detail::view_kernel<Geometry, Kind>},
                                  KernelFunction{&detail::view_kernel<Geometry, Kind>, "meta (view)"});
  if constexpr (Kind == ViewKind::Differentiable) detail::check_differentiable_view_schema(op);
  d.register_unboxed_cpu(op, detail::unboxed_cpu<detail::ViewBody<Geometry, Kind>, Geometry>);
  return op;
}

template <auto Check, auto Compute>
OperatorHandle def_inplace(Dispatcher& d, std::string_view ns, std::string_view schema) {
  const OperatorHandle op = d.def(ns, schema, KernelFunction{&detail::inplace_kernel<Check, Compute, Device::CPU>},
                                  KernelFunction{&detail::inplace_kernel<Check, Compute, Device::Meta>, "meta"});
  d.register_unboxed_cpu(op, detail::unboxed_cpu<detail::InplaceBody<Check, Compute>, Check>);
  return op;
}

}  // namespace strata::ops
