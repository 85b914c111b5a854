// ops/native/max_ops.cpp: value-selecting ops: max (all elements), max.dim (values and int64
// indices), argmax (one dimension or all), and sort and topk along a dimension (values and int64
// indices). Their derivatives are the composite value_selecting_reduction_backward
// (ops/composites.cpp). As PyTorch's CPU kernels: NaN is the maximum (the first NaN wins), and among
// equal maxima the first index is taken; sort is stable.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"

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

// ---- sort, topk: each row along `dim` ordered by value, with its int64 indices ----

// Where row `row` (of the rows along dimension `d`, counted row-major over the other dimensions)
// starts in `t`'s storage, relative to its first element.
std::int64_t row_offset(const Tensor& t, std::size_t d, std::int64_t row) {
  std::int64_t offset = 0;
  for (std::size_t i = t.sizes().size(); i-- > 0;) {
    if (i == d) continue;
    offset += (row % t.sizes()[i]) * t.strides()[i];
    row /= t.sizes()[i];
  }
  return offset;
}

// PyTorch's orders: NaN counts as larger than any number, so it sorts last ascending, first
// descending; `before(x, y)` says whether x goes first.
template <typename T>
bool goes_before(T x, T y, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {
    if (descending) return (std::isnan(x) && !std::isnan(y)) || x > y;
    return (!std::isnan(x) && std::isnan(y)) || x < y;
  } else {
    return descending ? x > y : x < y;
  }
}

// For each row of `self` along `dim`: its (value, index) pairs, ordered by `order`, of which the
// first `out_n` are written to the rows of `values` and `indices`.
template <typename Order>
void select_rows(const Tensor& values, const Tensor& indices, const Tensor& self, std::int64_t dim, std::int64_t out_n,
                 const Order& order) {
  const auto d = static_cast<std::size_t>(self.dim() == 0 ? 0 : wrap_dim(dim, self.dim()));
  const std::int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  const std::int64_t rows = n == 0 ? 0 : self.numel() / n;
  const auto stride_of = [&](const Tensor& t) { return t.dim() == 0 ? 0 : t.strides()[d]; };
  const std::int64_t in_stride = stride_of(self), v_stride = stride_of(values), i_stride = stride_of(indices);
  std::int64_t* idx = data_of<std::int64_t>(indices);
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(self);
    T* v = data_of<T>(values);
    std::vector<std::pair<T, std::int64_t>> row_items(static_cast<std::size_t>(n));
    for (std::int64_t row = 0; row < rows; ++row) {
      const T* in = x + row_offset(self, d, row);
      for (std::int64_t i = 0; i < n; ++i) row_items[static_cast<std::size_t>(i)] = {load_element(in + i * in_stride), i};
      order(row_items);
      T* vo = v + row_offset(values, d, row);
      std::int64_t* io = idx + row_offset(indices, d, row);
      for (std::int64_t i = 0; i < out_n; ++i) {
        vo[i * v_stride] = row_items[static_cast<std::size_t>(i)].first;
        io[i * i_stride] = row_items[static_cast<std::size_t>(i)].second;
      }
    }
  });
}

// sort's outputs are laid out as self is, made dense (PyTorch's sort.stable meta function).
std::array<TensorSpec, 2> sort_meta(const Tensor& self, std::int64_t dim, bool) {
  wrap_dim(dim, self.dim());
  const DimVector strides = output_strides(self.sizes(), {&self});
  return {TensorSpec{DimVector(self.sizes()), self.dtype(), strides},
          TensorSpec{DimVector(self.sizes()), ScalarType::Int64, strides}};
}
void sort_cpu(const Tensor& values, const Tensor& indices, const Tensor& self, std::int64_t dim, bool descending) {
  if (values.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const std::int64_t n = self.dim() == 0 ? 1 : self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
  select_rows(values, indices, self, dim, n, [&](auto& items) {
    std::stable_sort(items.begin(), items.end(),
                     [&](const auto& a, const auto& b) { return goes_before(a.first, b.first, descending); });
  });
}

std::array<TensorSpec, 2> topk_meta(const Tensor& self, std::int64_t k, std::int64_t dim, bool, bool) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  STRATA_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.sizes()[static_cast<std::size_t>(d)] : 1), "selected index k out of range");
  STRATA_CHECK(self.dtype() != ScalarType::Bool, "\"topk_cpu\" not implemented for 'Bool'");
  DimVector sizes(self.sizes());
  if (!sizes.empty()) sizes[static_cast<std::size_t>(d)] = k;
  return {TensorSpec{sizes, self.dtype(), {}}, TensorSpec{sizes, ScalarType::Int64, {}}};
}
// The k largest (or smallest) in order, ties by index. PyTorch leaves the order of ties, and with
// sorted=False the order of the k, to its partial sort; strata always gives this order.
void topk_cpu(const Tensor& values, const Tensor& indices, const Tensor& self, std::int64_t k, std::int64_t dim,
              bool largest, bool) {
  if (values.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  select_rows(values, indices, self, dim, k, [&](auto& items) {
    std::partial_sort(items.begin(), items.begin() + k, items.end(), [&](const auto& a, const auto& b) {
      if (goes_before(a.first, b.first, largest)) return true;
      return !goes_before(b.first, a.first, largest) && a.second < b.second;
    });
  });
}

}  // namespace

// register_max_ops(): the rows of max_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/max_ops_rows.inc"

}  // namespace strata::ops
