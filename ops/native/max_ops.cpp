// ops/native/max_ops.cpp: value-selecting reductions: max (all elements), max.dim (values and int64
// indices) and argmax (one dimension or all). max.dim's derivative is the composite
// value_selecting_reduction_backward (ops/functions.cpp). As PyTorch's CPU kernels: NaN is the
// maximum (the first NaN wins), and among equal maxima the first index is taken.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"

namespace strata::ops {

namespace {

// A tensor seen as (outer, n, inner) around dimension `dim`; a 0-d tensor is one row of one.
struct Rows {
  std::int64_t outer = 1, n = 1, inner = 1;
};
Rows rows_around(IntArrayRef sizes, std::int64_t dim) {
  Rows r;
  if (sizes.empty()) return r;
  const auto d = static_cast<std::size_t>(dim);
  for (std::size_t i = 0; i < d; ++i) r.outer *= sizes[i];
  r.n = sizes[d];
  for (std::size_t i = d + 1; i < sizes.size(); ++i) r.inner *= sizes[i];
  return r;
}

// Sizes after reducing (wrapped) dimension `dim` of `sizes`.
DimVector reduced_sizes(IntArrayRef sizes, std::int64_t dim, bool keepdim) {
  DimVector out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (static_cast<std::int64_t>(i) != dim) out.push_back(sizes[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// Whether x beats the running maximum m: a NaN beats everything but an earlier NaN.
template <typename T>
bool beats(T x, T m) {
  if constexpr (std::is_floating_point_v<T>) return (x != x && m == m) || x > m;
  else return x > m;
}

// For each of the outer * inner rows of contiguous `x`, the index (along n) of its maximum, and the
// maximum itself. Rows are independent, so large inputs split across threads.
template <typename T, typename Fn>
void for_each_row_max(const T* x, const Rows& r, const Fn& store) {
  const std::int64_t grain = std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(r.n, 1));
  parallel_for(0, r.outer * r.inner, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const T* p = x + (row / r.inner) * r.n * r.inner + row % r.inner;
      T best = load_element(p);
      std::int64_t where = 0;
      for (std::int64_t i = 1; i < r.n; ++i) {
        const T v = load_element(p + i * r.inner);
        if (beats(v, best)) {
          best = v;
          where = i;
        }
      }
      store(row, best, where);
    }
  });
}

// ---- max: the largest element (NaN if there is one) ----
TensorSpec max_meta(const Tensor& self) {
  STRATA_CHECK(self.numel() > 0,
               "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
               "the 'dim' argument.");
  return {{}, self.dtype(), {}};
}
void max_cpu(const Tensor& out, const Tensor& self) {
  const Operand x = Operand::contiguous(self);  // Note [Operands are read where they are]
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const Rows all{1, self.numel(), 1};
    for_each_row_max(data_of<T>(*x), all, [&](std::int64_t, T best, std::int64_t) { *data_of<T>(out) = best; });
  });
}

// ---- max.dim: (values, indices) along one dimension ----
void check_nonempty_dim(const char* op, const Tensor& self, std::int64_t dim) {
  STRATA_CHECK(self.dim() == 0 || self.sizes()[static_cast<std::size_t>(dim)] != 0, op, "(): Expected reduction dim ", dim,
               " to have non-zero size.");
}

std::array<TensorSpec, 2> max_dim_meta(const Tensor& self, std::int64_t dim, bool keepdim) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  check_nonempty_dim("max", self, d);
  DimVector sizes = reduced_sizes(self.sizes(), d, keepdim);
  return {TensorSpec{sizes, self.dtype(), {}}, TensorSpec{sizes, ScalarType::Int64, {}}};
}
void max_dim_cpu(const Tensor& values, const Tensor& indices, const Tensor& self, std::int64_t dim, bool) {
  if (values.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const Operand x = Operand::contiguous(self);
  const Rows r = rows_around(self.sizes(), self.dim() == 0 ? 0 : wrap_dim(dim, self.dim()));
  std::int64_t* idx = data_of<std::int64_t>(indices);
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* v = data_of<T>(values);
    for_each_row_max(data_of<T>(*x), r, [&](std::int64_t row, T best, std::int64_t where) {
      v[row] = best;
      idx[row] = where;
    });
  });
}

// ---- argmax: the index of the maximum along `dim`, or in the flattened tensor ----
TensorSpec argmax_meta(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  STRATA_CHECK(self.dtype() != ScalarType::Bool, "\"argmax_cpu\" not implemented for '", dtype_c10_name(self.dtype()), "'");
  if (!dim) {
    STRATA_CHECK(self.numel() > 0, "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
    return {keepdim ? DimVector(static_cast<std::size_t>(self.dim()), 1) : DimVector{}, ScalarType::Int64, {}};
  }
  const std::int64_t d = wrap_dim(*dim, self.dim());
  check_nonempty_dim("argmax", self, d);
  return {reduced_sizes(self.sizes(), d, keepdim), ScalarType::Int64, {}};
}
void argmax_cpu(const Tensor& out, const Tensor& self, std::optional<std::int64_t> dim, bool) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const Operand x = Operand::contiguous(self);
  const Rows r = dim && self.dim() > 0 ? rows_around(self.sizes(), wrap_dim(*dim, self.dim())) : Rows{1, self.numel(), 1};
  std::int64_t* idx = data_of<std::int64_t>(out);
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for_each_row_max(data_of<T>(*x), r, [&](std::int64_t row, T, std::int64_t where) { idx[row] = where; });
  });
}

}  // namespace

// register_max_ops(): the rows of max_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/max_ops_rows.inc"

}  // namespace strata::ops
