// ops/linalg_ops.cpp: mm and addmm on Eigen, or on small_gemm for small products whose right operand
// has unit-stride rows. A row-major or column-major operand (such as the transposed weight w.t() that
// nn.Linear passes) is mapped in place, never copied; only other layouts are made contiguous first,
// for Eigen (small_gemm reads any strides). int64 uses a plain loop (Eigen's GEMM is for floating types).
#include <Eigen/Core>

#include "core/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/elementwise.h"
#include "ops/op_table.h"
#include "ops/operand.h"
#include "ops/small_gemm.h"

namespace strata::ops {

namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename M>
using ConstMap = Eigen::Map<const M, Eigen::Unaligned, Eigen::OuterStride<>>;

enum class MatrixLayout { RowMajor, ColMajor, Other };

MatrixLayout layout_of(const Tensor& m) {
  const std::int64_t rows = m.sizes()[0], cols = m.sizes()[1];
  const std::int64_t s0 = m.strides()[0], s1 = m.strides()[1];
  if ((s1 == 1 || cols <= 1) && s0 >= std::max<std::int64_t>(cols, 1)) return MatrixLayout::RowMajor;
  if ((s0 == 1 || rows <= 1) && s1 >= std::max<std::int64_t>(rows, 1)) return MatrixLayout::ColMajor;
  return MatrixLayout::Other;
}

// Calls fn(eigen_map) with `m` viewed as an Eigen matrix without copying when its layout allows.
template <typename T, typename Fn>
void with_matrix(const Tensor& m, const Fn& fn) {
  const Eigen::Index rows = m.sizes()[0], cols = m.sizes()[1];
  switch (layout_of(m)) {
    case MatrixLayout::RowMajor:
      fn(ConstMap<RowMatrix<T>>(data_of<T>(m), rows, cols, Eigen::OuterStride<>(std::max<std::int64_t>(m.strides()[0], cols))));
      return;
    case MatrixLayout::ColMajor:
      fn(ConstMap<ColMatrix<T>>(data_of<T>(m), rows, cols, Eigen::OuterStride<>(std::max<std::int64_t>(m.strides()[1], rows))));
      return;
    case MatrixLayout::Other: break;
  }
  const Operand dense = Operand::contiguous(m);  // a copy, unless m has no elements to read
  fn(ConstMap<RowMatrix<T>>(data_of<T>(*dense), rows, cols, Eigen::OuterStride<>(cols)));
}

// Note [Small products skip Eigen's GEMM]
// Eigen's GEMM runs the same machinery for an 8x16 @ 16x32 product as for 256x512 @ 512x512:
// blocking heuristics, packing both operands, the parallel dispatch, the gebp kernel, one
// instantiation per layout pair. For small products that machinery is most of the work, and its
// code does not stay in the instruction cache between ops. small_gemm (ops/small_gemm.h) is one loop
// nest per dtype that reads the operands in place and keeps a 4-row x 16-column (float) block of
// sums in registers. It applies when
//  - b's rows are unit-stride. For a column-major b (the forward's x @ w.t()) no loop order is
//    unit-stride without reducing across lanes, and plain dot products, or copying a strip of b onto
//    the stack, are slower than Eigen. Those go to small_gemm_dots instead (float with AVX2 and FMA;
//    k a multiple of 8, a row-major): eight columns share each load of a's row and their eight lane
//    sums are reduced together. Other layouts keep Eigen.
//  - p is a multiple of the strip width (16 floats, 8 doubles): padding the last strip is slower
//    than Eigen.
//  - n * k * p <= 8192: up to there small_gemm measured faster than Eigen for every shape tried
//    (4x8x32 to 32x8x16, float and double); around 16384 multiply-adds they are even, and past it
//    Eigen wins.
// The measurements are in the commit that brought this in.
// Whether small_gemm computes a @ b (above).
template <typename T>
bool small_gemm_applies(const Tensor& b, std::int64_t n, std::int64_t k, std::int64_t p) {
  return b.strides()[1] == 1 && p % kSmallGemmStrip<T> == 0 && is_small_product(n, k, p);
}

// Whether small_gemm_dots computes a @ b (float only; Note [Small products skip Eigen's GEMM]).
bool small_dot_gemm_applies(const Tensor& a, const Tensor& b, std::int64_t n, std::int64_t k, std::int64_t p) {
  return a.strides()[1] == 1 && b.strides()[0] == 1 && k % 8 == 0 && is_small_product(n, k, p);
}

// out (contiguous, n x p) = alpha * a @ b, or += when `accumulate`.
template <typename T>
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, T alpha, bool accumulate) {
  const Eigen::Index n = a.sizes()[0], k = a.sizes()[1], p = b.sizes()[1];
  T* c = data_of<T>(out);
  if constexpr (!std::is_floating_point_v<T>) {
    // out[i][j] (+)= alpha * sum_l a[i][l] * b[l][j], with a's and b's own strides, wrapping on
    // overflow as PyTorch does (Note [Integer kernels wrap]).
    const T* x = data_of<T>(a);
    const T* y = data_of<T>(b);
    const std::int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < p; ++j) {
        T acc = 0;
        for (Eigen::Index l = 0; l < k; ++l)
          acc = wrapping_add(acc, wrapping_mul(x[i * as0 + l * as1], y[l * bs0 + j * bs1]));
        c[i * p + j] = wrapping_add(accumulate ? c[i * p + j] : T(0), wrapping_mul(alpha, acc));
      }
  } else {
    // Small products (Note [Small products skip Eigen's GEMM]).
    if (small_gemm_applies<T>(b, n, k, p)) {
      small_gemm<T>(c, {data_of<T>(a), a.strides()[0], a.strides()[1]}, {data_of<T>(b), b.strides()[0], 1}, n, k, p,
                    alpha, accumulate);
      return;
    }
    if constexpr (std::is_same_v<T, float> && kSmallDotGemm) {
      if (small_dot_gemm_applies(a, b, n, k, p)) {
        small_gemm_dots(c, data_of<T>(a), a.strides()[0], data_of<T>(b), b.strides()[1], n, k, p, alpha, accumulate);
        return;
      }
    }
    Eigen::Map<RowMatrix<T>> C(c, n, p);
    with_matrix<T>(a, [&](const auto& A) {
      with_matrix<T>(b, [&](const auto& B) {
        if (k == 0) {
          if (!accumulate) C.setZero();
        } else if (accumulate) {
          C.noalias() += alpha * (A * B);
        } else if (alpha == T(1)) {
          C.noalias() = A * B;
        } else {
          C.noalias() = alpha * (A * B);
        }
      });
    });
  }
}

void check_matmul_dtype(ScalarType t) {
  STRATA_CHECK(t != ScalarType::Bool, "\"addmm_impl_cpu_\" not implemented for 'bool'");
}

// ---- mm ----
TensorSpec mm_meta(const Tensor& self, const Tensor& mat2) {
  STRATA_CHECK(self.dim() == 2, "self must be a matrix");
  STRATA_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  STRATA_CHECK(self.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", shape_x(self.sizes()),
               " and ", shape_x(mat2.sizes()), ")");
  STRATA_CHECK(self.dtype() == mat2.dtype(), "expected mat1 and mat2 to have the same dtype, but got: ", self.dtype(),
               " != ", mat2.dtype());
  check_matmul_dtype(self.dtype());
  return {DimVector{self.sizes()[0], mat2.sizes()[1]}, self.dtype(), {}};
}

void mm_cpu(const Tensor& out, const Tensor& self, const Tensor& mat2) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) gemm<T>(out, self, mat2, T(1), false);
  });
}

// ---- addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape ----

TensorSpec addmm_meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  STRATA_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  STRATA_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  STRATA_CHECK(self.dtype() == mat2.dtype(), "self and mat2 must have the same dtype, but got ", self.dtype(), " and ",
               mat2.dtype());
  STRATA_CHECK(mat1.dtype() == mat2.dtype(), "mat1 and mat2 must have the same dtype, but got ", mat1.dtype(), " and ",
               mat2.dtype());
  STRATA_CHECK(mat1.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", shape_x(mat1.sizes()),
               " and ", shape_x(mat2.sizes()), ")");
  check_matmul_dtype(self.dtype());
  STRATA_CHECK(is_floating_point(self.dtype()) || (!beta.is_floating_point() && !alpha.is_floating_point()),
               "For integral input tensors, argument alpha must not be a floating point number.");
  DimVector shape{mat1.sizes()[0], mat2.sizes()[1]};
  if (!is_expandable_to(self.sizes(), shape))  // PyTorch's expand error, from expand's own geometry
    expand_geometry(self.sizes(), self.strides(), shape);
  return {std::move(shape), self.dtype(), {}};
}

void addmm_cpu(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T b = beta.to<T>();
      if (b == T(0)) {  // self is ignored, so NaN/inf in it do not propagate (as in PyTorch)
        gemm<T>(out, mat1, mat2, alpha.to<T>(), false);
        return;
      }
      copy_elements(out, self);
      if (b != T(1)) {
        T* o = data_of<T>(out);
        for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = wrapping_mul(o[i], b);
      }
      gemm<T>(out, mat1, mat2, alpha.to<T>(), true);
    }
  });
}

}  // namespace

void register_linalg_ops(Dispatcher& d) {
  def_functional<mm_meta, mm_cpu>(d, "aten", "mm(Tensor self, Tensor mat2) -> Tensor", "mm");
  def_functional<addmm_meta, addmm_cpu>(
      d, "aten", "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", "addmm");
}

}  // namespace strata::ops
