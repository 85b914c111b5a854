// ops/compute_in_float.h: how float16 and bfloat16 tensors reach kernels that compute in float32 (Note
// [float16 and bfloat16 compute in float]). ops/boxing.h calls these around every CPU kernel.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <vector>

#include "../core/tensor.h"

namespace strata::ops {

// Note [float16 and bfloat16 compute in float]
// PyTorch's CPU kernels compute float16 (Half) and bfloat16 in float: each input element is widened,
// the op runs in float ("opmath"), and the result is rounded once to the output's dtype; reductions
// accumulate in float and round at the end. strata does the same in one place rather than in each
// kernel: the boxing adapters (functional, in-place; ops/boxing.h) check a call's tensors, and when one
// of them is float16 or bfloat16 they hand the kernel float32 tensors instead: an input is widened (a
// new float32 tensor of its geometry when that is dense or broadcast, else contiguous), a new output gets
// a float32 twin that is rounded into it afterwards (copy_elements, Note [float16 conversion], Note
// [bfloat16 conversion]), an in-place self is widened, updated and rounded back, and a dtype argument
// naming float16 or bfloat16 reads float32. Meta functions and checks see the real dtypes, so shapes,
// promotion (float16 with bfloat16 is float32) and errors are PyTorch's; only the kernel is unchanged.
// So every family with a CPU kernel accepts them: pointwise, reductions, softmax, norms, losses,
// comparisons, indexing and scatter, mm/addmm/bmm/matmul/linear (a float32 GEMM, float32 accumulation,
// one rounding: what PyTorch's CPU gemm for Half does, up to summation order), random (values drawn as
// for float32, then rounded). Kernels that move elements of any dtype themselves (copy_, _to_copy,
// fill_, the factories) are marked with kComputesReducedFloat and skip the detour. A kernel called
// around this path (one kernel calling another's function) meets float16 in visit_dtype, which refuses
// it: "not implemented for 'Half'", after the op's name. Costs: one widening pass per float16 input and
// one rounding pass per output, and a float32 copy of each input in memory while the kernel runs (an
// embedding table included). Known difference: an integer tensor combined with a float16 one is
// converted to float32, not first rounded to float16 as PyTorch's TensorIterator does (it matters only
// for integers above 2048 in magnitude).
namespace detail {

// A float32 tensor holding t's values, of t's geometry when t is dense or broadcast (no copy of the
// broadcast), else contiguous.
Tensor widen_to_float(const Tensor& t);
// A float32 tensor of out's sizes and strides (out is a new, dense output), its elements unset.
Tensor float_twin(const Tensor& out);
// Rounds `wide` (float32) into `out` (float16 or bfloat16), element by element.
void round_into(const Tensor& out, const Tensor& wide);
bool any_reduced_float(TensorList list);

// Kernels that take float16 and bfloat16 as they are (specialised to true beside their definitions).
template <auto Compute>
inline constexpr bool kComputesReducedFloat = false;

template <typename T>
[[gnu::always_inline]] inline bool is_reduced_argument(const T& a) {
  if constexpr (std::is_same_v<T, Tensor>) return a.defined() && is_reduced_float(a.dtype());
  else if constexpr (std::is_same_v<T, TensorList>) return any_reduced_float(a);
  else return false;
}

// A Tensor[] argument with its float16 and bfloat16 elements widened.
struct WidenedList {
  std::vector<Tensor> tensors;
  operator TensorList() const { return TensorList(tensors.data(), tensors.size()); }  // NOLINT: implicit
};

template <typename T>
decltype(auto) widen_argument(const T& a) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return is_reduced_argument(a) ? widen_to_float(a) : a;
  } else if constexpr (std::is_same_v<T, TensorList>) {
    WidenedList list;
    list.tensors.reserve(a.size());
    for (const Tensor& t : a) list.tensors.push_back(is_reduced_argument(t) ? widen_to_float(t) : t);
    return list;
  } else if constexpr (std::is_same_v<T, ScalarType>) {
    return is_reduced_float(a) ? ScalarType::Float32 : a;
  } else if constexpr (std::is_same_v<T, std::optional<ScalarType>>) {
    return a && is_reduced_float(*a) ? std::optional<ScalarType>(ScalarType::Float32) : a;
  } else {
    return (a);  // a const reference to the caller's argument
  }
}

// A functional kernel's call with float16 or bfloat16 among its outputs or arguments.
template <auto Compute, std::size_t K, typename... A>
[[gnu::noinline]] void compute_in_float(const std::array<Tensor, K>& outs, const A&... args) {
  std::array<Tensor, K> wide;
  for (std::size_t i = 0; i < K; ++i) wide[i] = is_reduced_argument(outs[i]) ? float_twin(outs[i]) : outs[i];
  std::apply([&](const auto&... w) { Compute(w..., widen_argument(args)...); }, wide);
  for (std::size_t i = 0; i < K; ++i)
    if (is_reduced_argument(outs[i])) round_into(outs[i], wide[i]);
}

// An in-place kernel's call with float16 or bfloat16 among its arguments (self or another).
template <auto Compute, typename Self, typename... A>
[[gnu::noinline]] void compute_inplace_in_float(const Self& self, const A&... args) {
  if (!is_reduced_argument(self)) return Compute(self, widen_argument(args)...);
  const Tensor wide = widen_to_float(self);
  Compute(wide, widen_argument(args)...);
  round_into(self, wide);
}

template <typename... A>
[[gnu::always_inline]] inline bool any_reduced_argument(const A&... args) {
  return (is_reduced_argument(args) || ...);
}

}  // namespace detail
}  // namespace strata::ops
