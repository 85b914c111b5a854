// ops/reduction_ops.cpp: sum.dim_IntList and sum.default. Output elements are computed in parallel,
// each summing its slice of the input in order; floating sums accumulate in double, integer and bool
// sums in int64 (whose result dtype is int64, as in PyTorch).
#include <optional>

#include "ops/boxing.h"
#include "ops/elementwise.h"
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
  for (std::int64_t dim : *dims) {
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
    if (ndim == 0) continue;
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
  return {sizes, sum_dtype(self, dtype), {}};
}

void sum_dim_cpu(const Tensor& out, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  (void)keepdim;
  (void)dtype;
  const SmallVector<bool, 5> mask = reduced_mask(self, dim);
  DimVector kept_sizes, kept_strides, red_sizes, red_strides;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    (mask[d] ? red_sizes : kept_sizes).push_back(self.sizes()[d]);
    (mask[d] ? red_strides : kept_strides).push_back(self.strides()[d]);
  }
  const StridedLoop<1> slice(red_sizes, {red_strides});
  visit_dtype(self.dtype(), [&](auto in_zero) {
    using In = decltype(in_zero);
    using Acc = std::conditional_t<std::is_floating_point_v<In>, double, std::int64_t>;
    visit_dtype(out.dtype(), [&](auto out_zero) {
      using Out = decltype(out_zero);
      const In* x = data_of<In>(self);
      Out* o = data_of<Out>(out);
      parallel_for(0, out.numel(), 64, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          std::int64_t base = 0, rest = i;  // out is contiguous over the kept dimensions
          for (std::size_t d = kept_sizes.size(); d-- > 0;) {
            base += (rest % kept_sizes[d]) * kept_strides[d];
            rest /= kept_sizes[d];
          }
          Acc acc = 0;
          slice.for_each_serial([&](const std::array<std::int64_t, 1>& off) { acc += static_cast<Acc>(x[base + off[0]]); });
          o[i] = static_cast<Out>(acc);
        }
      });
    });
  });
}

TensorSpec sum_meta(const Tensor& self, std::optional<ScalarType> dtype) {
  return sum_dim_meta(self, std::nullopt, false, dtype);
}
void sum_cpu(const Tensor& out, const Tensor& self, std::optional<ScalarType> dtype) {
  sum_dim_cpu(out, self, std::nullopt, false, dtype);
}

}  // namespace

void register_reduction_ops(Dispatcher& d) {
  def_functional<sum_dim_meta, sum_dim_cpu>(
      d, "aten", "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      "sum");
  def_functional<sum_meta, sum_cpu>(d, "aten", "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", "sum");
}

}  // namespace strata::ops
