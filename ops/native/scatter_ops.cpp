// ops/native/scatter_ops.cpp: gather and the scatters (scatter.src, scatter.value, scatter_add), which
// read or write one element along `dim` per element of an int64 index tensor. They are what
// max.dim's backward (value_selecting_reduction_backward: zeros, then scatter) and its derivatives
// dispatch. Checks and wording are PyTorch 1.13's ScatterGatherChecks (a 0-d tensor counts as one
// element of one dimension); elements are visited in the index's row-major order, serially, so a
// scatter that writes one place twice keeps the last write, as PyTorch's CPU kernel does.
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

std::int64_t nonempty_dim(const Tensor& t) { return t.dim() == 0 ? 1 : t.dim(); }
std::int64_t nonempty_size(const Tensor& t, std::int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[static_cast<std::size_t>(d)]; }
std::int64_t nonempty_stride(const Tensor& t, std::int64_t d) { return t.dim() == 0 ? 0 : t.strides()[static_cast<std::size_t>(d)]; }

void check_index_dtype(const char* op, const Tensor& index) {
  STRATA_CHECK(index.numel() == 0 || index.dtype() == ScalarType::Int64, op, "(): Expected dtype int64 for index");
}

// Calls fn(k, self_offset, other_offset) for each element of `index` in row-major order: k is the
// index's value (checked against self's size along dim), self_offset the element's offset in `self`
// with dimension dim moved to k, other_offset its offset in `other` (laid out like index).
template <typename Fn>
void for_each_index(const Tensor& index, std::int64_t dim, const Tensor& self, const Tensor& other, const Fn& fn) {
  const std::int64_t n = index.numel();
  if (n == 0) return;
  const std::int64_t dims = nonempty_dim(index);
  const std::int64_t bound = nonempty_size(self, dim), self_step = nonempty_stride(self, dim);
  const std::int64_t* idx = data_of<std::int64_t>(index);
  DimVector counter(static_cast<std::size_t>(dims), 0);
  std::int64_t at_index = 0, at_self = 0, at_other = 0;
  for (std::int64_t visited = 0; visited < n; ++visited) {
    const std::int64_t k = idx[at_index];
    STRATA_CHECK(k >= 0 && k < bound, "index ", k, " is out of bounds for dimension ", dim, " with size ", bound);
    fn(k, at_self + k * self_step, at_other);
    for (std::int64_t d = dims - 1; d >= 0; --d) {  // the next element: an odometer over index's sizes
      const auto u = static_cast<std::size_t>(d);
      const std::int64_t self_stride = d == dim ? 0 : nonempty_stride(self, d);
      if (++counter[u] < nonempty_size(index, d)) {
        at_index += nonempty_stride(index, d);
        at_self += self_stride;
        at_other += nonempty_stride(other, d);
        break;
      }
      at_index -= (counter[u] - 1) * nonempty_stride(index, d);
      at_self -= (counter[u] - 1) * self_stride;
      at_other -= (counter[u] - 1) * nonempty_stride(other, d);
      counter[u] = 0;
    }
  }
}

// ---- gather: out[i][j] = self[index[i][j]][j] (dim 0), out shaped as index ----
TensorSpec gather_meta(const Tensor& self, std::int64_t dim, const Tensor& index, bool sparse_grad) {
  (void)sparse_grad;
  const std::int64_t d = wrap_dim(dim, self.dim());
  check_index_dtype("gather", index);
  STRATA_CHECK(nonempty_dim(self) == nonempty_dim(index), "Index tensor must have the same number of dimensions as input tensor");
  for (std::int64_t i = 0; i < nonempty_dim(self); ++i)
    STRATA_CHECK(i == d || nonempty_size(index, i) <= nonempty_size(self, i), "Size does not match at dimension ", i,
                 " expected index ", shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
                 " apart from dimension ", d);
  return {DimVector(index.sizes()), self.dtype(), {}};
}
void gather_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, const Tensor& index, bool) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* s = data_of<T>(self);
    T* o = data_of<T>(out);
    for_each_index(index, d, self, out, [&](std::int64_t, std::int64_t at_self, std::int64_t at_out) { o[at_out] = load_element(s + at_self); });
  });
}

// ---- scatter.src, scatter.value, scatter_add: a copy of self, written at the indexed places ----
void check_scatter(const char* op, const Tensor& self, std::int64_t d, const Tensor& index, const Tensor* src) {
  check_index_dtype(op, index);
  if (src) STRATA_CHECK(self.dtype() == src->dtype(), op, "(): Expected self.dtype to be equal to src.dtype");
  if (index.numel() == 0) return;
  STRATA_CHECK(nonempty_dim(self) == nonempty_dim(index), "Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (std::int64_t i = 0; i < nonempty_dim(self); ++i)
    if (i != d && nonempty_size(index, i) > nonempty_size(self, i)) wrong = true;
  // PyTorch compares src's sizes before its number of dimensions: a src with fewer dimensions than
  // self fails there, with src.size(i)'s "Dimension out of range".
  if (src && !wrong) {
    for (std::int64_t i = 0; i < nonempty_dim(self); ++i) {
      if (src->dim() > 0) (void)wrap_dim(i, src->dim());
      if (nonempty_size(index, i) > nonempty_size(*src, i)) wrong = true;
    }
  }
  if (src) STRATA_CHECK(nonempty_dim(*src) == nonempty_dim(index), "Index tensor must have the same number of dimensions as src tensor");
  if (src)
    STRATA_CHECK(!wrong, "Expected index ", shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
                 " apart from dimension ", d, " and to be smaller size than src ", shape_str(src->sizes()));
  STRATA_CHECK(!wrong, "Expected index ", shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
               " apart from dimension ", d);
}

// out = a copy of self, then write(out element, offset in `other`) at each indexed place.
template <typename T, typename Write>
void scatter_into(const Tensor& out, const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& other,
                  const Write& write) {
  copy_elements(out, self);
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const std::int64_t d = self.dim() == 0 ? 0 : wrap_dim(dim, self.dim());
  T* o = data_of<T>(out);
  for_each_index(index, d, out, other, [&](std::int64_t, std::int64_t at_out, std::int64_t at_other) { write(o[at_out], at_other); });
}

// scatter.src writes src's element at each indexed place, scatter_add adds it: the same op but for that.
enum class Combine { Assign, Add };

template <Combine C>
TensorSpec scatter_with_src_meta(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  check_scatter("scatter", self, wrap_dim(dim, self.dim()), index, &src);  // PyTorch's scatter_meta_impl says "scatter" for both
  return {DimVector(self.sizes()), self.dtype(), {}};
}
template <Combine C>
void scatter_with_src_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* s = data_of<T>(src);
    scatter_into<T>(out, self, dim, index, src, [s](T& o, std::int64_t at) {
      if constexpr (C == Combine::Assign) o = load_element(s + at);
      else o = static_cast<T>(o + load_element(s + at));
    });
  });
}

constexpr auto scatter_src_meta = scatter_with_src_meta<Combine::Assign>;
constexpr auto scatter_src_cpu = scatter_with_src_cpu<Combine::Assign>;
constexpr auto scatter_add_meta = scatter_with_src_meta<Combine::Add>;
constexpr auto scatter_add_cpu = scatter_with_src_cpu<Combine::Add>;

TensorSpec scatter_value_meta(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value) {
  (void)value;
  check_scatter("scatter", self, wrap_dim(dim, self.dim()), index, nullptr);
  return {DimVector(self.sizes()), self.dtype(), {}};
}
void scatter_value_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = value.to<T>();
    scatter_into<T>(out, self, dim, index, index, [v](T& o, std::int64_t) { o = v; });
  });
}

}  // namespace

// register_scatter_ops(): the rows of scatter_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/scatter_ops_rows.inc"

}  // namespace strata::ops
