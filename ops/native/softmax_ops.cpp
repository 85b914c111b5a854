// ops/native/softmax_ops.cpp: _log_softmax, _softmax and their backward_data ops along one dimension.
// A tensor is seen as (outer, n, inner) around the softmax dimension; non-contiguous inputs are made
// contiguous first. Row maxima are subtracted before exp, as PyTorch does, so large logits are safe.
#include <Eigen/Core>
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/operand.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

struct SoftmaxShape {
  std::int64_t outer = 1, n = 1, inner = 1;
};

SoftmaxShape softmax_shape(const Tensor& t, std::int64_t dim) {
  SoftmaxShape s;
  if (t.dim() == 0) return s;
  const auto d = static_cast<std::size_t>(wrap_dim(dim, t.dim()));
  for (std::size_t i = 0; i < d; ++i) s.outer *= t.sizes()[i];
  s.n = t.sizes()[d];
  for (std::size_t i = d + 1; i < static_cast<std::size_t>(t.dim()); ++i) s.inner *= t.sizes()[i];
  return s;
}

// Note [Softmax rows take exp a block at a time]
// Along the last dimension (inner == 1) a run of rows is one contiguous block, so exp runs over the
// whole block with Eigen's vectorised exp instead of once per element through libm, forward and
// backward: a few vector packets where there were as many calls as elements. PyTorch's lastdim
// kernels also use a vectorised exp (Sleef); both are within an ulp or two of libm.
template <typename T>  // T may be const
auto block_of(T* p, std::int64_t len) {
  using Array = Eigen::Array<std::remove_const_t<T>, Eigen::Dynamic, 1>;
  return Eigen::Map<std::conditional_t<std::is_const_v<T>, const Array, Array>>(p, static_cast<Eigen::Index>(len));
}

// Note [A softmax row's maximum is found once]
// exp overwrites a row in place, and the final shift needs the row's maximum again, so each row's
// maximum is kept on the stack rather than found twice, for blocks of up to 256 rows (the parallel
// grain; a serial call over more rows takes several blocks, which also keeps each block in cache
// across its three passes). Each block starts a multiple of 256 rows in, so Eigen's exp splits its
// elements into packets exactly as over the whole run: results do not depend on the blocking. The
// arithmetic is (x - max) - log(sum), with the sum added left to right: PyTorch keeps that order
// (its kernel's comment cites pytorch/pytorch#11752), since max + log(sum) rounds log(sum) away when
// the logits are large and the sum is close to 1.
inline constexpr std::int64_t kSoftmaxBlockRows = 256;

// Note [Short softmax rows have a fixed width]
// Classification logits often have a handful of classes per row. With the row length known only at
// run time, each per-row loop (maximum, shift, sum, final shift) is a vectorised loop whose prologue
// and remainder handling cost more than a few elements. So rows of 1 to kMaxShortRow elements take
// an instantiation where the length is a constant and those loops unroll; longer rows take the
// general one (kAnyRow). The arithmetic and its order are the same in all of them, so results are
// bitwise the same whichever runs.
inline constexpr std::int64_t kAnyRow = 0;
inline constexpr std::int64_t kMaxShortRow = 8;

// Calls fn(std::integral_constant<std::int64_t, W>) with W = n when n is a short row length,
// kAnyRow otherwise.
template <typename Fn, std::int64_t... W>
void with_row_width(std::int64_t n, const Fn& fn, std::integer_sequence<std::int64_t, W...>) {
  const bool short_row = ((n == W + 1 && (fn(std::integral_constant<std::int64_t, W + 1>{}), true)) || ...);
  if (!short_row) fn(std::integral_constant<std::int64_t, kAnyRow>{});
}
template <typename Fn>
void with_row_width(std::int64_t n, const Fn& fn) {
  with_row_width(n, fn, std::make_integer_sequence<std::int64_t, kMaxShortRow>{});
}

// One block of at most kSoftmaxBlockRows rows of length n (W when W is not kAnyRow).
template <std::int64_t W, typename T>
void log_softmax_lastdim_block(T* __restrict o, const T* __restrict x, std::int64_t rows, std::int64_t row_length) {
  const std::int64_t n = W == kAnyRow ? row_length : W;
  T maxes[kSoftmaxBlockRows];
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T max = -std::numeric_limits<T>::infinity();
    for (std::int64_t i = 0; i < n; ++i) max = std::max(max, xr[i]);
    maxes[r] = max;
    T* orow = o + r * n;
    for (std::int64_t i = 0; i < n; ++i) orow[i] = xr[i] - max;
  }
  block_of(o, rows * n) = block_of(o, rows * n).exp();
  for (std::int64_t r = 0; r < rows; ++r) {
    T* __restrict orow = o + r * n;
    const T* __restrict xr = x + r * n;
    T sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += orow[i];
    const T max = maxes[r], log_sum = std::log(sum);
    for (std::int64_t i = 0; i < n; ++i) orow[i] = (xr[i] - max) - log_sum;
  }
}

// o[row] = (x[row] - max) - log(sum(exp(x[row] - max))) for `rows` contiguous rows of n
// (Note [A softmax row's maximum is found once], Note [Short softmax rows have a fixed width]).
template <typename T>
void log_softmax_lastdim(T* o, const T* x, std::int64_t rows, std::int64_t n) {
  with_row_width(n, [&](auto width) {
    for (std::int64_t first = 0; first < rows; first += kSoftmaxBlockRows)
      log_softmax_lastdim_block<width()>(o + first * n, x + first * n, std::min(kSoftmaxBlockRows, rows - first), n);
  });
}

// o[row] = g[row] - exp(y[row]) * sum(g[row]) for `rows` contiguous rows of n (W when W is not kAnyRow).
template <std::int64_t W, typename T>
void log_softmax_backward_rows(T* __restrict o, const T* g, const T* y, std::int64_t rows, std::int64_t row_length) {
  const std::int64_t n = W == kAnyRow ? row_length : W;
  block_of(o, rows * n) = block_of(y, rows * n).exp();
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* gr = g + r * n;
    T* orow = o + r * n;
    T sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += gr[i];
    for (std::int64_t i = 0; i < n; ++i) orow[i] = gr[i] - orow[i] * sum;
  }
}
template <typename T>
void log_softmax_backward_lastdim(T* o, const T* g, const T* y, std::int64_t rows, std::int64_t n) {
  with_row_width(n, [&](auto width) { log_softmax_backward_rows<width()>(o, g, y, rows, n); });
}

// The row walker of all four kernels: fn(o, a, b, s, begin, end) over the rows [begin, end) of
// contiguous views of `a` (whose shape gives the rows) and `b` (null when not given), blocks of rows
// split across threads. out has a's shape and dtype.
template <typename Fn>
void for_each_row_block(const Tensor& out, const Tensor& a, const Tensor& b, std::int64_t dim, std::string_view name,
                        const Fn& fn) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const SoftmaxShape s = softmax_shape(a, dim);
  const Operand ac = Operand::contiguous(a), bc = Operand::contiguous(b);  // Note [Operands are read where they are]
  visit_floating(out.dtype(), name, [&](auto zero) {
    using T = decltype(zero);
    const T* ap = data_of<T>(*ac);
    const T* bp = b.defined() ? data_of<T>(*bc) : nullptr;
    T* o = data_of<T>(out);
    parallel_for(0, s.outer * s.inner, 256, [&](std::int64_t begin, std::int64_t end) { fn(o, ap, bp, s, begin, end); });
  });
}

// Whether PyTorch runs its last-dimension kernel (a 0-d tensor is viewed as one element); checks
// `dim` first.
bool along_last_dim(const Tensor& self, std::int64_t dim) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  return self.dim() == 0 || d == self.dim() - 1;
}

// ---- _log_softmax: out = x - max - log(sum(exp(x - max))) ----
TensorSpec log_softmax_meta(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_CHECK(!half_to_float, "softmax with half to float conversion is not supported on CPU");  // PyTorch's words for both
  // PyTorch's kernel names: the other-dimension kernel of log_softmax is also "softmax_kernel_impl".
  check_floating(self.dtype(), along_last_dim(self, dim) ? "\"log_softmax_lastdim_kernel_impl\"" : "\"softmax_kernel_impl\"");
  return {{}, self.dtype(), {}, &self};
}

void log_softmax_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, bool) {
  for_each_row_block(out, self, Tensor(), dim, "_log_softmax",
                     [](auto* o, const auto* x, const auto*, const SoftmaxShape& s, std::int64_t begin, std::int64_t end) {
                       using T = std::remove_pointer_t<decltype(o)>;
                       if (s.inner == 1) return log_softmax_lastdim(o + begin * s.n, x + begin * s.n, end - begin, s.n);
                       for (std::int64_t row = begin; row < end; ++row) {
                         const std::int64_t base = (row / s.inner) * s.n * s.inner + row % s.inner;
                         T max = -std::numeric_limits<T>::infinity();
                         for (std::int64_t i = 0; i < s.n; ++i) max = std::max(max, x[base + i * s.inner]);
                         T sum = 0;
                         for (std::int64_t i = 0; i < s.n; ++i) sum += std::exp(x[base + i * s.inner] - max);
                         const T log_sum = std::log(sum);
                         for (std::int64_t i = 0; i < s.n; ++i) o[base + i * s.inner] = x[base + i * s.inner] - max - log_sum;
                       }
                     });
}

// ---- _log_softmax_backward_data: grad_input = grad - exp(output) * sum(grad) ----
TensorSpec log_softmax_backward_meta(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                     ScalarType input_dtype) {
  STRATA_CHECK(std::equal(grad_output.sizes().begin(), grad_output.sizes().end(), output.sizes().begin(),
                          output.sizes().end()),
               "grad_output and output must have the same shape, but got ", shape_str(grad_output.sizes()), " and ",
               shape_str(output.sizes()));
  STRATA_CHECK(grad_output.dtype() == output.dtype(), "grad_output and output must have the same dtype, but got ",
               grad_output.dtype(), " and ", output.dtype());
  wrap_dim(dim, output.dim());
  check_floating(output.dtype(), "\"log_softmax_backward_lastdim\"");
  // PyTorch's CPU meta function gives the gradient grad_output's dtype: input_dtype only turns a float
  // gradient into half, for CUDA, and strata has no half.
  (void)input_dtype;
  return {{}, grad_output.dtype(), {}, &output};
}

void log_softmax_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                              ScalarType) {
  for_each_row_block(out, output, grad_output, dim, "_log_softmax_backward_data",
                     [](auto* o, const auto* yp, const auto* gp, const SoftmaxShape& s, std::int64_t begin, std::int64_t end) {
                       using T = std::remove_pointer_t<decltype(o)>;
                       if (s.inner == 1)
                         return log_softmax_backward_lastdim(o + begin * s.n, gp + begin * s.n, yp + begin * s.n, end - begin, s.n);
                       for (std::int64_t row = begin; row < end; ++row) {
                         const std::int64_t base = (row / s.inner) * s.n * s.inner + row % s.inner;
                         T sum = 0;
                         for (std::int64_t i = 0; i < s.n; ++i) sum += gp[base + i * s.inner];
                         for (std::int64_t i = 0; i < s.n; ++i) {
                           const std::int64_t k = base + i * s.inner;
                           o[k] = gp[k] - std::exp(yp[k]) * sum;
                         }
                       }
                     });
}

// ---- _softmax: out = exp(x - max) / sum(exp(x - max)) ----
TensorSpec softmax_meta(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_CHECK(!half_to_float, "softmax with half to float conversion is not supported on CPU");
  check_floating(self.dtype(), along_last_dim(self, dim) ? "\"softmax_lastdim_kernel_impl\"" : "\"softmax_kernel_impl\"");
  return {{}, self.dtype(), {}, &self};
}

// One row of n elements `stride` apart (the last dimension has stride 1).
template <typename T>
void softmax_row(T* o, const T* x, std::int64_t n, std::int64_t stride) {
  T max = -std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i * stride]);
  T sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = std::exp(x[i * stride] - max);
    o[i * stride] = e;
    sum += e;
  }
  const T inverse = T(1) / sum;
  for (std::int64_t i = 0; i < n; ++i) o[i * stride] *= inverse;
}

void softmax_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, bool) {
  for_each_row_block(out, self, Tensor(), dim, "_softmax",
                     [](auto* o, const auto* x, const auto*, const SoftmaxShape& s, std::int64_t begin, std::int64_t end) {
                       for (std::int64_t row = begin; row < end; ++row) {
                         const std::int64_t base = (row / s.inner) * s.n * s.inner + row % s.inner;
                         softmax_row(o + base, x + base, s.n, s.inner);
                       }
                     });
}

// ---- _softmax_backward_data: grad_input = output * (grad - sum(grad * output)) ----
TensorSpec softmax_backward_meta(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                 ScalarType input_dtype) {
  STRATA_CHECK(std::equal(grad_output.sizes().begin(), grad_output.sizes().end(), output.sizes().begin(),
                          output.sizes().end()),
               "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but ",
               shape_str(grad_output.sizes()), " does not equal ", shape_str(output.sizes()),
               " (while checking arguments for softmax_backward)");
  STRATA_CHECK(grad_output.dtype() == output.dtype(), "grad_output and output must have the same dtype, but got ",
               grad_output.dtype(), " and ", output.dtype());
  wrap_dim(dim, output.dim());
  check_floating(output.dtype(), "\"softmax_backward_lastdim\"");
  (void)input_dtype;  // as _log_softmax_backward_data: only a CUDA half gradient reads it
  return {{}, grad_output.dtype(), {}, &output};
}

void softmax_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                          ScalarType) {
  for_each_row_block(out, output, grad_output, dim, "_softmax_backward_data",
                     [](auto* o, const auto* yp, const auto* gp, const SoftmaxShape& s, std::int64_t begin, std::int64_t end) {
                       using T = std::remove_pointer_t<decltype(o)>;
                       for (std::int64_t row = begin; row < end; ++row) {
                         const std::int64_t base = (row / s.inner) * s.n * s.inner + row % s.inner;
                         T dot = 0;
                         for (std::int64_t i = 0; i < s.n; ++i) dot += gp[base + i * s.inner] * yp[base + i * s.inner];
                         for (std::int64_t i = 0; i < s.n; ++i) {
                           const std::int64_t k = base + i * s.inner;
                           o[k] = yp[k] * (gp[k] - dot);
                         }
                       }
                     });
}

}  // namespace

void register_softmax_ops(Dispatcher& d) {
  def_functional<log_softmax_meta, log_softmax_cpu>(
      d, "aten", "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
      FrontEnd::manual());
  def_functional<log_softmax_backward_meta, log_softmax_backward_cpu>(
      d, "aten",
      "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor",
      FrontEnd::python("torch._log_softmax_backward_data"));
  def_functional<softmax_meta, softmax_cpu>(
      d, "aten", "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
      FrontEnd::manual());
  def_functional<softmax_backward_meta, softmax_backward_cpu>(
      d, "aten", "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
      FrontEnd::python("torch._softmax_backward_data"));
}

}  // namespace strata::ops
