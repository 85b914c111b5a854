// ops/native/softmax_ops.cpp: _log_softmax, _softmax and their backward_data ops along one dimension.
// A tensor is seen as (outer, n, inner) around the softmax dimension; non-contiguous inputs are made
// contiguous first. Row maxima are subtracted before exp, as PyTorch does, so large logits are safe.
#include <Eigen/Core>
#include <cmath>
#include <string>
#include <utility>

#include "ops/boxing.h"
#include "ops/native/operand.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

struct SoftmaxShape {
  std::int64_t outer = 1, n = 1, inner = 1;
  // Where row `row` (rows numbered outer-major) starts; its n elements are `inner` apart.
  std::int64_t row_start(std::int64_t row) const { return (row / inner) * n * inner + row % inner; }
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

// ---- the four ops ----
// Each op is a struct: its names, and static functions over its rows: row() takes one row of n
// elements `stride` apart; an op whose rows along the last dimension are worth taking a block at a
// time (Note [Softmax rows take exp a block at a time]) also has lastdim(), over `rows` contiguous
// rows of n. Their operands: the output o, a (the forward's x, the backward's output y) and b (the
// backward's grad_output g; null for a forward).

// The largest of n elements `stride` apart, and the sum of exp(x - max) over them; each(i, e) sees
// every exp(x_i - max) as it is summed.
template <typename T, typename Each>
std::pair<T, T> row_max_and_exp_sum(const T* x, std::int64_t n, std::int64_t stride, const Each& each) {
  T max = -std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i * stride]);
  T sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = std::exp(x[i * stride] - max);
    each(i, e);
    sum += e;
  }
  return {max, sum};
}

// _log_softmax (Log): o = (x - max) - log(sum(exp(x - max)));
// _softmax:           o = exp(x - max) / sum(exp(x - max)).
// Only _log_softmax takes its last-dimension rows a block at a time.
template <bool Log>
struct ForwardRows {
  static constexpr const char* kOp = Log ? "_log_softmax" : "_softmax";
  static constexpr const char* kKernel = Log ? "\"log_softmax_lastdim_kernel_impl\"" : "\"softmax_lastdim_kernel_impl\"";
  static constexpr bool kBlocks = Log;
  template <typename T>
  static void row(T* o, const T* x, const T*, std::int64_t n, std::int64_t stride) {
    if constexpr (Log) {
      const auto [max, sum] = row_max_and_exp_sum(x, n, stride, [](std::int64_t, T) {});
      const T log_sum = std::log(sum);
      for (std::int64_t i = 0; i < n; ++i) o[i * stride] = x[i * stride] - max - log_sum;
    } else {
      const T sum = row_max_and_exp_sum(x, n, stride, [&](std::int64_t i, T e) { o[i * stride] = e; }).second;
      const T inverse = T(1) / sum;
      for (std::int64_t i = 0; i < n; ++i) o[i * stride] *= inverse;
    }
  }
  template <typename T>
  static void lastdim(T* o, const T* x, const T*, std::int64_t rows, std::int64_t n) {
    log_softmax_lastdim(o, x, rows, n);
  }
};
using LogSoftmaxRows = ForwardRows<true>;
using SoftmaxRows = ForwardRows<false>;

// _log_softmax_backward_data: o = g - exp(y) * sum(g)
struct LogSoftmaxBackwardRows {
  static constexpr const char* kOp = "_log_softmax_backward_data";
  static constexpr const char* kKernel = "\"log_softmax_backward_lastdim\"";
  static std::string shape_error(const Tensor& grad_output, const Tensor& output) {
    return strata::detail::str_cat("grad_output and output must have the same shape, but got ", shape_str(grad_output.sizes()),
                           " and ", shape_str(output.sizes()));
  }
  static constexpr bool kBlocks = true;
  template <typename T>
  static void row(T* o, const T* y, const T* g, std::int64_t n, std::int64_t stride) {
    T sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += g[i * stride];
    for (std::int64_t i = 0; i < n; ++i) o[i * stride] = g[i * stride] - std::exp(y[i * stride]) * sum;
  }
  template <typename T>
  static void lastdim(T* o, const T* y, const T* g, std::int64_t rows, std::int64_t n) {
    log_softmax_backward_lastdim(o, g, y, rows, n);
  }
};

// _softmax_backward_data: o = y * (g - sum(g * y))
struct SoftmaxBackwardRows {
  static constexpr const char* kOp = "_softmax_backward_data";
  static constexpr const char* kKernel = "\"softmax_backward_lastdim\"";
  static std::string shape_error(const Tensor& grad_output, const Tensor& output) {
    return strata::detail::str_cat("Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but ",
                           shape_str(grad_output.sizes()), " does not equal ", shape_str(output.sizes()),
                           " (while checking arguments for softmax_backward)");
  }
  static constexpr bool kBlocks = false;
  template <typename T>
  static void row(T* o, const T* y, const T* g, std::int64_t n, std::int64_t stride) {
    T dot = 0;
    for (std::int64_t i = 0; i < n; ++i) dot += g[i * stride] * y[i * stride];
    for (std::int64_t i = 0; i < n; ++i) o[i * stride] = y[i * stride] * (g[i * stride] - dot);
  }
};

// Runs an op's rows over contiguous views of `a` (whose shape gives the rows) and `b` (undefined for
// a forward), blocks of rows split across threads. out has a's shape and dtype.
template <typename Rows>
void run_rows(const Tensor& out, const Tensor& a, const Tensor& b, std::int64_t dim) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const SoftmaxShape s = softmax_shape(a, dim);
  const Operand ac = Operand::contiguous(a), bc = Operand::contiguous(b);  // Note [Operands are read where they are]
  visit_floating(out.dtype(), Rows::kOp, [&](auto zero) {
    using T = decltype(zero);
    const T* ap = data_of<T>(*ac);
    const T* bp = b.defined() ? data_of<T>(*bc) : nullptr;
    T* o = data_of<T>(out);
    auto b_at = [bp](std::int64_t offset) { return bp ? bp + offset : nullptr; };
    parallel_for(0, s.outer * s.inner, 256, [&](std::int64_t begin, std::int64_t end) {
      if constexpr (Rows::kBlocks)
        if (s.inner == 1) return Rows::lastdim(o + begin * s.n, ap + begin * s.n, b_at(begin * s.n), end - begin, s.n);
      for (std::int64_t row = begin; row < end; ++row) {
        const std::int64_t at = s.row_start(row);
        Rows::row(o + at, ap + at, b_at(at), s.n, s.inner);
      }
    });
  });
}

// _log_softmax and _softmax. PyTorch names its last-dimension kernel (Rows::kKernel; a 0-d tensor
// is one element along its last dimension) or, along another, softmax_kernel_impl for both ops.
template <typename Rows>
TensorSpec forward_meta(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_CHECK(!half_to_float, "softmax with half to float conversion is not supported on CPU");  // PyTorch's words for both
  const std::int64_t d = wrap_dim(dim, self.dim());
  const bool last = self.dim() == 0 || d == self.dim() - 1;
  check_floating(self.dtype(), last ? Rows::kKernel : "\"softmax_kernel_impl\"");
  return {{}, self.dtype(), {}, &self};
}
template <typename Rows>
void forward_cpu(const Tensor& out, const Tensor& self, std::int64_t dim, bool) {
  run_rows<Rows>(out, self, Tensor(), dim);
}

// _log_softmax_backward_data and _softmax_backward_data. PyTorch's CPU meta functions give the
// gradient grad_output's dtype: input_dtype only turns a float gradient into half, for CUDA, and
// strata has no half.
template <typename Rows>
TensorSpec backward_meta(const Tensor& grad_output, const Tensor& output, std::int64_t dim, ScalarType) {
  STRATA_CHECK(grad_output.sizes() == output.sizes(), Rows::shape_error(grad_output, output));
  STRATA_CHECK(grad_output.dtype() == output.dtype(), "grad_output and output must have the same dtype, but got ",
               grad_output.dtype(), " and ", output.dtype());
  wrap_dim(dim, output.dim());
  check_floating(output.dtype(), Rows::kKernel);
  return {{}, grad_output.dtype(), {}, &output};
}
template <typename Rows>
void backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& output, std::int64_t dim, ScalarType) {
  run_rows<Rows>(out, output, grad_output, dim);
}

constexpr auto log_softmax_meta = forward_meta<LogSoftmaxRows>;
constexpr auto log_softmax_cpu = forward_cpu<LogSoftmaxRows>;
constexpr auto log_softmax_backward_meta = backward_meta<LogSoftmaxBackwardRows>;
constexpr auto log_softmax_backward_cpu = backward_cpu<LogSoftmaxBackwardRows>;
constexpr auto softmax_meta = forward_meta<SoftmaxRows>;
constexpr auto softmax_cpu = forward_cpu<SoftmaxRows>;
constexpr auto softmax_backward_meta = backward_meta<SoftmaxBackwardRows>;
constexpr auto softmax_backward_cpu = backward_cpu<SoftmaxBackwardRows>;

}  // namespace

// register_softmax_ops(): the rows of softmax_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/softmax_ops_rows.inc"

}  // namespace strata::ops
