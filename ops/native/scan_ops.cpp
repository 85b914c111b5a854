// ops/native/scan_ops.cpp: ops that walk along a dimension: cumsum (the running sum, which top-p
// sampling takes of the sorted probabilities) and flip (the reversal cumsum's backward runs: the
// gradient of a running sum is the reversed running sum of the gradient, PyTorch's reversed_cumsum).
#include <algorithm>
#include <optional>

#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// ---- cumsum: out[..., i, ...] = self[..., 0, ...] + ... + self[..., i, ...] along `dim` ----

// Note [cumsum promotes, then accumulates wide]
// As PyTorch's cumsum: the output dtype is `dtype` when given, else int64 for integer and bool
// inputs, else self's; self is converted to it first, then summed in PyTorch's CPU accumulation type
// (double for float32 and float64, int64 for integers, which wrap) and each partial sum rounded to
// the output's dtype. A float32 running sum so matches PyTorch's bit for bit, where a float
// accumulator drifts (1e5 normal values differ from the double-accumulated sums in most elements).
ScalarType cumsum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  return dtype.value_or(is_integral(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype());
}

TensorSpec cumsum_meta(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype) {
  wrap_dim(dim, self.dim());
  const ScalarType out = cumsum_dtype(self, dtype);
  // PyTorch's kernel has no bool loop; a 0-d or empty self never reaches it.
  STRATA_CHECK(out != ScalarType::Bool || self.dim() == 0 || self.numel() == 0,
               "\"cumsum_out_cpu\" not implemented for 'Bool'");
  return {DimVector(self.sizes()), out, {}};
}

void cumsum_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, std::optional<ScalarType>) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const Operand converted = Operand::in_dtype(self, out.dtype());
  const Operand x = Operand::contiguous(*converted);
  std::int64_t outer = 1, n = 1, inner = 1;
  if (self.dim() > 0) {
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
    for (std::size_t i = 0; i < d; ++i) outer *= self.sizes()[i];
    n = self.sizes()[d];
    for (std::size_t i = d + 1; i < self.sizes().size(); ++i) inner *= self.sizes()[i];
  }
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
      const T* in = data_of<T>(*x);
      T* o = data_of<T>(out);
      for (std::int64_t a = 0; a < outer; ++a) {
        for (std::int64_t b = 0; b < inner; ++b) {
          const std::int64_t base = a * n * inner + b;
          Acc acc = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            acc = wrapping_add(acc, static_cast<Acc>(in[base + i * inner]));
            o[base + i * inner] = static_cast<T>(acc);
          }
        }
      }
    }
  });
}

// ---- flip: self with the order of its elements reversed along each of `dims` ----
// The output is laid out as self is (PyTorch's empty_like with preserve_format); each of its
// elements reads self at the mirrored index, walked as a view of self with the flipped dimensions'
// strides negated, starting at their last element.
TensorSpec flip_meta(const Tensor& self, IntArrayRef dims) {
  SmallVector<bool, 5> seen(static_cast<std::size_t>(std::max<std::int64_t>(self.dim(), 1)), false);
  for (std::int64_t dim : dims) {
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
    STRATA_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
  }
  return {DimVector(self.sizes()), self.dtype(), output_strides(self.sizes(), {&self})};
}

void flip_cpu(const Tensor& out, const Tensor& self, IntArrayRef dims) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  DimVector in_strides(self.strides());
  std::int64_t start = 0;
  for (std::int64_t dim : dims) {
    if (self.dim() == 0) continue;
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
    start += (self.sizes()[d] - 1) * in_strides[d];
    in_strides[d] = -in_strides[d];
  }
  visit_all_dtypes(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = data_of<T>(out);
    const T* x = data_of<T>(self) + start;
    const StridedLoop<2> loop(self.sizes(), {DimVector(out.strides()), in_strides});
    loop.for_each([&](const std::array<std::int64_t, 2>& off) { o[off[0]] = load_element(x + off[1]); });
  });
}

}  // namespace

// register_scan_ops(): the rows of scan_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/scan_ops_rows.inc"

}  // namespace strata::ops
