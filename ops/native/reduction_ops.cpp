// ops/native/reduction_ops.cpp: sum.dim_IntList, sum.default, mean.dim and mean.default. Floating sums
// accumulate in double, integer and bool sums in int64 (whose result dtype is int64, as in PyTorch);
// a mean is the sum divided by the number of elements reduced, as PyTorch's CPU mean computes it.
#include <algorithm>
#include <optional>

#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// Which dimensions a reduction over `dims` (None or [] meaning all) removes.
SmallVector<bool, 5> reduced_mask(const Tensor& self, std::optional<IntArrayRef> dims) {
  const auto ndim = static_cast<std::size_t>(self.dim());
  SmallVector<bool, 5> mask(ndim, false);
  if (!dims || dims->empty()) {
    for (std::size_t d = 0; d < ndim; ++d) mask[d] = true;
    return mask;
  }
  bool scalar_dim_seen = false;  // a 0-d tensor reduces over its one implicit dimension, 0 or -1
  for (std::int64_t dim : *dims) {
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
    if (ndim == 0) {
      STRATA_CHECK(!scalar_dim_seen, "dim 0 appears multiple times in the list of dims");
      scalar_dim_seen = true;
      continue;
    }
    STRATA_CHECK(!mask[d], "dim ", d, " appears multiple times in the list of dims");
    mask[d] = true;
  }
  return mask;
}

ScalarType sum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_floating_point(self.dtype()) ? self.dtype() : ScalarType::Int64;
}

TensorSpec sum_dim_meta(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, std::optional<ScalarType> dtype) {
  const SmallVector<bool, 5> mask = reduced_mask(self, dim);
  DimVector sizes;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) sizes.push_back(self.sizes()[d]);
    else if (keepdim) sizes.push_back(1);
  }
  return {std::move(sizes), sum_dtype(self, dtype), {}};
}

// Note [Float sums accumulate in double]
// A float32 sum accumulated in float drifts: ten million 0.1f add up to 1087937 instead of 1e6, as
// each addition rounds to 24 bits. PyTorch keeps the error small with cascade summation; strata
// accumulates every floating sum in double and rounds once at the end, on both paths below, so the
// contiguous fast path and the strided path agree to float precision.

// Note [Rows are summed a block of columns at a time]
// A bias gradient is the sum over dim 0 of a contiguous batch x features tensor (8 x 32 in strata-trace's default MLP).
// Summing it with one double per column in memory (acc[j] += x[r][j] over all j, row after row) loads
// and stores every accumulator once per row. Instead a block of W columns keeps its W double sums in registers for all the rows (W = 16:
// four AVX2 registers of doubles), then stores them once; narrower leftovers take W = 4, then 1. Each
// column still adds its rows in order, in double (Note [Float sums accumulate in double]), so the
// result is bitwise what the one-accumulator-per-column loop gives.

// Columns [0, W) of out = the sums over `rows` rows (row stride `inner`) of x's columns [0, W).
template <std::int64_t W, typename T>
inline void sum_rows_block(T* out, const T* x, std::int64_t rows, std::int64_t inner) {
  double acc[W];
#pragma omp simd
  for (std::int64_t q = 0; q < W; ++q) acc[q] = static_cast<double>(x[q]);
  for (std::int64_t r = 1; r < rows; ++r) {
    const T* row = x + r * inner;
#pragma omp simd
    for (std::int64_t q = 0; q < W; ++q) acc[q] += static_cast<double>(row[q]);
  }
#pragma omp simd
  for (std::int64_t q = 0; q < W; ++q) out[q] = static_cast<T>(acc[q]);
}

// out (the `inner` trailing elements) = the sum of the rows of contiguous `self` (rows x inner, rows
// > 0): Note [Rows are summed a block of columns at a time].
template <typename T>
void sum_rows(const Tensor& out, const Tensor& self) {
  const std::int64_t inner = out.numel(), rows = self.numel() / inner;
  const T* x = data_of<T>(self);
  T* o = data_of<T>(out);
  std::int64_t j = 0;
  for (; j + 16 <= inner; j += 16) sum_rows_block<16>(o + j, x + j, rows, inner);
  for (; j + 4 <= inner; j += 4) sum_rows_block<4>(o + j, x + j, rows, inner);
  for (; j < inner; ++j) sum_rows_block<1>(o + j, x + j, rows, inner);
}

// Whether `dims` are the leading dimensions 0 .. k-1 (in any order) of a tensor of `ndim` dimensions;
// None or [] reduce them all. sum_dim_meta has already checked them (in range, none repeated), so k
// distinct dimensions all below k are exactly those, and the kernel need not build reduced_mask.
bool reduces_leading_dims(std::optional<IntArrayRef> dims, std::int64_t ndim) {
  if (!dims || dims->empty()) return true;
  const auto k = static_cast<std::int64_t>(dims->size());
  for (std::int64_t d : *dims)
    if ((d < 0 ? d + std::max<std::int64_t>(ndim, 1) : d) >= k) return false;
  return true;
}

// One pass over the input, accumulating each element into its output slot (`out` is contiguous over
// the kept dimensions, so a reduced dimension has output stride 0). Serial: reductions here are
// small (bias gradients); the large products run in Eigen.
void sum_dim_cpu(const Tensor& out, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  (void)keepdim;
  (void)dtype;
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  // Contiguous input reduced over leading dimensions (bias gradients): add rows.
  if (self.is_contiguous() && reduces_leading_dims(dim, self.dim()) && self.numel() > 0 && self.dtype() == out.dtype() &&
      is_floating_point(self.dtype())) {
    visit_floating(self.dtype(), "sum", [&](auto zero) { sum_rows<decltype(zero)>(out, self); });
    return;
  }
  const SmallVector<bool, 5> mask = reduced_mask(self, dim);
  DimVector out_strides(mask.size(), 0);
  std::int64_t running = 1;
  for (std::size_t d = mask.size(); d-- > 0;) {
    if (mask[d]) continue;
    out_strides[d] = running;
    running *= self.sizes()[d];
  }
  // Each element is converted to the output's dtype first, then summed, as PyTorch's CPU sum does
  // (sum(dtype=int64) of [1.5, 2.5] is 1 + 2; NaN becomes INT64_MIN: Note [Float to integer
  // conversion saturates to INT64_MIN]).
  visit_dtype(out.dtype(), [&](auto out_zero) {
    using Out = decltype(out_zero);
    using Acc = std::conditional_t<std::is_floating_point_v<Out>, double, std::int64_t>;
    SmallVector<Acc, 16> acc(static_cast<std::size_t>(out.numel()), Acc(0));
    visit_dtype(self.dtype(), [&](auto in_zero) {
      using In = decltype(in_zero);
      const In* x = data_of<In>(self);
      const StridedLoop<2> loop(self.sizes(), {DimVector(self.strides()), out_strides});
      loop.for_each_serial([&](const std::array<std::int64_t, 2>& off) {
        Acc& slot = acc[static_cast<std::size_t>(off[1])];
        const Out value = convert_element<Out>(load_element(x + off[0]));
        slot = wrapping_add(slot, static_cast<Acc>(value));  // integers wrap (Note [Integer kernels wrap])
      });
    });
    Out* o = data_of<Out>(out);
    for (std::size_t i = 0; i < acc.size(); ++i) o[i] = convert_element<Out>(acc[i]);
  });
}

TensorSpec sum_meta(const Tensor& self, std::optional<ScalarType> dtype) {
  return sum_dim_meta(self, std::nullopt, false, dtype);
}
void sum_cpu(const Tensor& out, const Tensor& self, std::optional<ScalarType> dtype) {
  sum_dim_cpu(out, self, std::nullopt, false, dtype);
}

// ---- mean.dim, mean: sum, then divided by the number of elements each output reduced ----
// Floating only: PyTorch's words for an integer input, or an integer dtype asked for.
ScalarType mean_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) {
    STRATA_CHECK(is_floating_point(*dtype),
                 "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: ",
                 *dtype);
    return *dtype;
  }
  STRATA_CHECK(is_floating_point(self.dtype()),
               "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ",
               self.dtype());
  return self.dtype();
}

TensorSpec mean_dim_meta(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, std::optional<ScalarType> dtype) {
  const ScalarType out_dtype = mean_dtype(self, dtype);
  return sum_dim_meta(self, dim, keepdim, out_dtype);
}

void mean_dim_cpu(const Tensor& out, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  sum_dim_cpu(out, self, dim, keepdim, out.dtype());
  // The reduced count is numel / out.numel() (0 when an input dimension is 0: the mean is then NaN).
  const std::int64_t count = out.numel() == 0 ? 0 : self.numel() / out.numel();
  (void)dtype;
  visit_floating(out.dtype(), "mean", [&](auto zero) {
    using T = decltype(zero);
    T* o = data_of<T>(out);
    const T n = static_cast<T>(count);
    for (std::int64_t i = 0; i < out.numel(); ++i) o[i] /= n;
  });
}

TensorSpec mean_meta(const Tensor& self, std::optional<ScalarType> dtype) { return mean_dim_meta(self, std::nullopt, false, dtype); }
void mean_cpu(const Tensor& out, const Tensor& self, std::optional<ScalarType> dtype) {
  mean_dim_cpu(out, self, std::nullopt, false, dtype);
}

}  // namespace

// register_reduction_ops(): the rows of reduction_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/reduction_ops_rows.inc"

}  // namespace strata::ops
