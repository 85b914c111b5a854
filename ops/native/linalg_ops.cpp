// ops/native/linalg_ops.cpp: mm, addmm, bmm and baddbmm (one product per batch) on Eigen, or on small_gemm for small products whose right operand
// has unit-stride rows. A row-major or column-major operand (such as the transposed weight w.t() that
// nn.Linear passes) is mapped in place, never copied; only other layouts are made contiguous first,
// for Eigen (small_gemm reads any strides). int64 uses a plain loop (Eigen's GEMM is for floating types).
// _scaled_mm dequantizes its float8 or int8 operands to float32 and runs the float32 product.
#include <Eigen/Core>

#include <array>
#include <cmath>

#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/matvec_dots.h"
#include "ops/native/small_gemm.h"

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
// code does not stay in the instruction cache between ops. small_gemm (ops/native/small_gemm.h) is one loop
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
      if (n == 1 && k > 0 && k % 8 == 0 && a.strides()[1] == 1 && b.strides()[0] == 1) {  // matvec_dots.h
        matvec_dots(c, data_of<T>(a), data_of<T>(b), b.strides()[1], k, p, alpha, accumulate);
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
  STRATA_CHECK(t != ScalarType::Bool, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

// Multiplies each element of contiguous `out` by `factor` (as out's dtype; integers wrap).
void mul_elements_by(const Tensor& out, const Scalar& factor) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T b = factor.to<T>();
      if (b == T(1)) return;
      T* o = data_of<T>(out);
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = wrapping_mul(o[i], b);
    }
  });
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
  (void)beta, (void)alpha;  // an integral product reads them truncated (0.5 -> 0), as PyTorch's alpha.to<int64_t>()
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
      mul_elements_by(out, beta);
      gemm<T>(out, mat1, mat2, alpha.to<T>(), true);
    }
  });
}

// ---- bmm, baddbmm: one product per batch, through gemm (the kernel mm and addmm use) ----

// The checks of PyTorch's common_checks_baddbmm_bmm, in its words; the product's sizes. Mixed dtypes
// fail in PyTorch's CPU kernel, which reads batch2 as batch1's dtype; `op` names the kernel that
// refuses Bool.
DimVector bmm_sizes(const char* op, const Tensor& batch1, const Tensor& batch2) {
  STRATA_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  STRATA_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  const IntArrayRef s1 = batch1.sizes(), s2 = batch2.sizes();
  STRATA_CHECK(s2[0] == s1[0] && s2[1] == s1[2], "Expected size for first two dimensions of batch2 tensor to be: [", s1[0],
               ", ", s1[2], "] but got: [", s2[0], ", ", s2[1], "].");
  STRATA_CHECK(batch1.dtype() == batch2.dtype(), "expected scalar type ", dtype_c10_name(batch1.dtype()), " but found ",
               dtype_c10_name(batch2.dtype()));
  STRATA_CHECK(batch1.dtype() != ScalarType::Bool, "\"", op, "\" not implemented for 'Bool'");
  return {s1[0], s1[1], s2[2]};
}

// Matrix `i` of a 3-D tensor, as a 2-D view (no copy).
Tensor matrix_at(const Tensor& t, std::int64_t i) {
  return detail::make_view_of(t, ViewSpec{DimVector{t.sizes()[1], t.sizes()[2]}, DimVector{t.strides()[1], t.strides()[2]},
                                          t.storage_offset() + i * t.strides()[0]});
}

// out[i] (contiguous) = alpha * batch1[i] @ batch2[i], or += when `accumulate`, for each batch i.
void batched_gemm(const Tensor& out, const Tensor& batch1, const Tensor& batch2, const Scalar& alpha, bool accumulate) {
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T a = alpha.to<T>();
      for (std::int64_t i = 0; i < out.sizes()[0]; ++i)
        gemm<T>(matrix_at(out, i), matrix_at(batch1, i), matrix_at(batch2, i), a, accumulate);
    }
  });
}

TensorSpec bmm_meta(const Tensor& self, const Tensor& mat2) { return {bmm_sizes("bmm", self, mat2), mat2.dtype(), {}}; }
void bmm_cpu(const Tensor& out, const Tensor& self, const Tensor& mat2) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  batched_gemm(out, self, mat2, Scalar(1), false);
}

// beta * self + alpha * (batch1 @ batch2), self broadcast to the product's shape (PyTorch 2.8's
// baddbmm meta also wants self's dtype to be the batches').
// In PyTorch's order: self expanded first (size() refuses a missing dimension), the batches checked last.
TensorSpec baddbmm_meta(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar, Scalar) {
  const DimVector target{batch1.size(0), batch1.size(1), batch2.size(2)};
  if (!is_expandable_to(self.sizes(), target))  // PyTorch's expand error, from expand's own geometry
    expand_geometry(self.sizes(), self.strides(), target);
  STRATA_CHECK(self.dtype() == batch1.dtype(), "Input dtypes must be the same, got: input ", self.dtype(),
               ", batch1: ", batch1.dtype(), ", batch2: ", batch2.dtype());
  return {bmm_sizes("baddbmm", batch1, batch2), self.dtype(), {}};
}
void baddbmm_cpu(const Tensor& out, const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta,
                 Scalar alpha) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const bool ignore_self = visit_dtype(out.dtype(), [&](auto zero) {  // beta == 0: NaN/inf in self do not propagate
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bool>) return true;
    else return beta.to<T>() == T(0);
  });
  if (!ignore_self) {
    copy_elements(out, self);
    mul_elements_by(out, beta);
  }
  batched_gemm(out, batch1, batch2, alpha, !ignore_self);
}

// ---- _scaled_mm: (float(mat1) * scale_a) @ (float(mat2) * scale_b) + bias, as out_dtype ----

// Note [_scaled_mm on CPU]
// PyTorch's CPU kernel (_scaled_mm_out_cpu_emulated) converts both operands to float32, multiplies
// each by its per-tensor scale, takes the float32 product, adds the bias, divides by scale_result when
// the output is float8, and converts to out_dtype (default: mat1's dtype). strata computes exactly
// that, in one pass per operand: each element becomes float(element) * scale, for float8 through a
// 256-entry table of the scaled values, into a float32 matrix with the operand's own layout (so w.t()
// stays column-major and Eigen reads it in place); the product is the float32 mm kernel's. The
// products accumulate in float32, as in PyTorch. float8 x float8 and int8 x int8 are accepted (PyTorch's
// CPU kernel takes float8 only); the scales must be float32 one-element tensors (per-tensor scaling,
// the only kind PyTorch's CPU kernel has) holding a positive finite number: a zero, negative, NaN or
// infinite scale is refused (PyTorch would quietly multiply by it): no amax-based scale is one, so it
// can only come from a bug upstream, and its output (zeros, sign flips, inf, NaN) would hide where.
// On meta the values are not known and not checked.
// There is no derivative (PyTorch has none): a call whose inputs require grad records a node whose
// backward fails (autograd/formulas/).

bool is_scaled_mm_operand(ScalarType t) { return t == ScalarType::Float8_e4m3fn || t == ScalarType::Int8; }

TensorSpec scaled_mm_meta(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                          const Tensor& bias, const Tensor& scale_result, std::optional<ScalarType> out_dtype, bool) {
  STRATA_CHECK(self.dim() == 2, "mat1 must be a matrix");
  STRATA_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  STRATA_CHECK(self.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", shape_x(self.sizes()),
               " and ", shape_x(mat2.sizes()), ")");
  STRATA_CHECK(scale_a.dtype() == ScalarType::Float32 && scale_b.dtype() == ScalarType::Float32,
               "Both scale_a and scale_b must be float (fp32) tensors.");
  STRATA_CHECK(scale_a.numel() == 1 && scale_b.numel() == 1,
               "Now _scaled_mm only supports per-tensor scaling for CPU backend.");
  STRATA_CHECK(!scale_result.defined() || (scale_result.numel() == 1 && scale_result.dtype() == ScalarType::Float32),
               "scale_result must be a float scalar");
  STRATA_CHECK(!bias.defined() || bias.numel() == mat2.sizes()[1], "Bias must be size ", mat2.sizes()[1], " but got ",
               bias.defined() ? bias.numel() : 0);
  STRATA_CHECK(!bias.defined() || bias.dtype() == ScalarType::Float32, "Bias must be a float32 tensor, got ", bias.dtype());
  STRATA_CHECK(is_scaled_mm_operand(self.dtype()), "Expected mat1 to be Float8 (or Int8) matrix got ",
               dtype_c10_name(self.dtype()));
  STRATA_CHECK(is_scaled_mm_operand(mat2.dtype()), "Expected mat2 to be Float8 (or Int8) matrix got ",
               dtype_c10_name(mat2.dtype()));
  STRATA_CHECK(self.dtype() == mat2.dtype(), "Expected mat1 and mat2 to have the same dtype, got ",
               dtype_c10_name(self.dtype()), " and ", dtype_c10_name(mat2.dtype()));
  for (const Tensor* t : {&scale_a, &scale_b, &bias, &scale_result})
    STRATA_CHECK(!t->defined() || t->device() == self.device(), "_scaled_mm: expected all tensors on ", self.device(),
                 ", got one on ", t->device());
  return {DimVector{self.sizes()[0], mat2.sizes()[1]}, out_dtype.value_or(self.dtype()), {}};
}

float checked_scale(const Tensor& scale, const char* name) {
  const float v = load_element(data_of<float>(scale));
  STRATA_CHECK(std::isfinite(v) && v > 0.0f, name, " must hold a positive finite number, got ", v);
  return v;
}

// float(m) * scale as a float32 matrix with m's layout when m is row- or column-major, else contiguous.
Tensor dequantize(const Tensor& m, float scale) {
  Tensor dense;
  if (layout_of(m) == MatrixLayout::Other) {
    dense = strata::detail::make_contiguous_tensor(m.sizes(), m.dtype(), Device::CPU);
    copy_elements(dense, m);
  }
  const Tensor& src = dense.defined() ? dense : m;
  const bool col = layout_of(src) == MatrixLayout::ColMajor;
  const std::int64_t rows = src.sizes()[0], cols = src.sizes()[1];
  const std::int64_t outer = col ? cols : rows, inner = col ? rows : cols;
  const std::int64_t outer_stride = col ? src.strides()[1] : src.strides()[0];
  const std::int64_t inner_stride = col ? src.strides()[0] : src.strides()[1];
  Tensor out = col ? strata::detail::make_tensor(src.sizes(), std::array<std::int64_t, 2>{1, rows}, ScalarType::Float32, Device::CPU)
                   : strata::detail::make_contiguous_tensor(src.sizes(), ScalarType::Float32, Device::CPU);
  float* o = data_of<float>(out);
  if (src.dtype() == ScalarType::Float8_e4m3fn) {
    std::array<float, 256> table;
    for (int b = 0; b < 256; ++b) table[static_cast<std::size_t>(b)] = float8_e4m3fn_to_float(static_cast<std::uint8_t>(b)) * scale;
    const auto* x = static_cast<const std::uint8_t*>(src.raw_data());
    parallel_for(0, outer, std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(inner, 1)),
                 [&](std::int64_t b, std::int64_t e) {
                   for (std::int64_t i = b; i < e; ++i)
                     for (std::int64_t j = 0; j < inner; ++j) o[i * inner + j] = table[x[i * outer_stride + j * inner_stride]];
                 });
  } else {
    const std::int8_t* x = data_of<std::int8_t>(src);
    parallel_for(0, outer, std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(inner, 1)),
                 [&](std::int64_t b, std::int64_t e) {
                   for (std::int64_t i = b; i < e; ++i)
                     for (std::int64_t j = 0; j < inner; ++j)
                       o[i * inner + j] = static_cast<float>(x[i * outer_stride + j * inner_stride]) * scale;
                 });
  }
  return out;
}

void scaled_mm_cpu(const Tensor& out, const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                   const Tensor& bias, const Tensor& scale_result, std::optional<ScalarType>, bool) {
  const float sa = checked_scale(scale_a, "scale_a");
  const float sb = checked_scale(scale_b, "scale_b");
  const float sr = scale_result.defined() && is_float8(out.dtype()) ? checked_scale(scale_result, "scale_result") : 1.0f;
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const Tensor a = dequantize(self, sa);
  const Tensor b = dequantize(mat2, sb);
  const bool direct = out.dtype() == ScalarType::Float32;
  const Tensor acc = direct ? out : strata::detail::make_contiguous_tensor(out.sizes(), ScalarType::Float32, Device::CPU);
  gemm<float>(acc, a, b, 1.0f, false);
  float* c = data_of<float>(acc);
  const std::int64_t n = acc.sizes()[0], p = acc.sizes()[1];
  if (bias.defined()) {
    const Operand bias_dense = Operand::contiguous(bias);
    const float* y = data_of<float>(*bias_dense);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < p; ++j) c[i * p + j] += load_element(y + j);
  }
  if (sr != 1.0f) {
    const float inverse = 1.0f / sr;
    for (std::int64_t i = 0; i < n * p; ++i) c[i] *= inverse;
  }
  if (!direct) copy_elements(out, acc);
}

}  // namespace

// register_linalg_ops(): the rows of linalg_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/linalg_ops_rows.inc"

}  // namespace strata::ops
