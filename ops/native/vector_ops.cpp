// ops/native/vector_ops.cpp: the products with a vector operand, dot (1-D . 1-D) and mv (2-D @ 1-D),
// which torch.matmul routes 1-D operands to (Note [matmul runs PyTorch's _matmul_impl],
// nn/functional.cpp). Each output element is one strided inner product, read in place whatever the
// operands' strides: floating sums accumulate in double (as reduction_ops' sums do), integer ones
// wrap (Note [Integer kernels wrap]).
#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// sum_i a[i * sa] * b[i * sb] for i < n, in T's accumulating type.
template <typename T>
T strided_inner_product(const T* a, std::int64_t sa, const T* b, std::int64_t sb, std::int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    double acc = 0;
    for (std::int64_t i = 0; i < n; ++i) acc += static_cast<double>(a[i * sa]) * static_cast<double>(b[i * sb]);
    return static_cast<T>(acc);
  } else {
    T acc = 0;
    for (std::int64_t i = 0; i < n; ++i) acc = wrapping_add(acc, wrapping_mul(a[i * sa], b[i * sb]));
    return acc;
  }
}

// ---- dot ----
TensorSpec dot_meta(const Tensor& self, const Tensor& tensor) {
  STRATA_CHECK(self.dim() == 1 && tensor.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", tensor.dim(),
               "D tensors");
  STRATA_CHECK(self.dtype() == tensor.dtype(), "dot : expected both vectors to have same dtype, but found ", self.dtype(),
               " and ", tensor.dtype());
  STRATA_CHECK(self.numel() == tensor.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
               tensor.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", tensor.numel(),
               " elements respectively");
  STRATA_CHECK(self.dtype() != ScalarType::Bool, "\"dot\" not implemented for 'Bool'");
  return {DimVector{}, self.dtype(), {}};
}

void dot_cpu(const Tensor& out, const Tensor& self, const Tensor& tensor) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>)  // bool is refused by dot_meta
      *data_of<T>(out) = strided_inner_product<T>(data_of<T>(self), self.strides()[0], data_of<T>(tensor),
                                                  tensor.strides()[0], self.numel());
  });
}

// ---- mv: PyTorch's addmv(empty, self, vec, beta=0, alpha=1), whose checks it makes ----
TensorSpec mv_meta(const Tensor& self, const Tensor& vec) {
  STRATA_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ", self.dim(), ", ", vec.dim());
  STRATA_CHECK(self.sizes()[1] == vec.sizes()[0], "size mismatch, got input (", self.sizes()[0], "), mat (",
               shape_x(self.sizes()), "), vec (", vec.sizes()[0], ")");
  STRATA_CHECK(self.dtype() == vec.dtype(), "expected scalar type ", self.dtype(), " but found ", vec.dtype());
  STRATA_CHECK(self.dtype() != ScalarType::Bool, "\"addmv_impl_cpu\" not implemented for 'Bool'");
  return {DimVector{self.sizes()[0]}, self.dtype(), {}};
}

void mv_cpu(const Tensor& out, const Tensor& self, const Tensor& vec) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {  // bool is refused by mv_meta
      T* o = data_of<T>(out);
      const T* m = data_of<T>(self);
      const T* v = data_of<T>(vec);
      const std::int64_t rows = self.sizes()[0], cols = self.sizes()[1];
      const std::int64_t row_stride = self.strides()[0], col_stride = self.strides()[1], vec_stride = vec.strides()[0];
      for (std::int64_t i = 0; i < rows; ++i)
        o[i] = strided_inner_product<T>(m + i * row_stride, col_stride, v, vec_stride, cols);
    }
  });
}

}  // namespace

// register_vector_ops(): the rows of vector_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/vector_ops_rows.inc"

}  // namespace strata::ops
