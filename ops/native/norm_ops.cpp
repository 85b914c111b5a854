// ops/native/norm_ops.cpp: native_layer_norm and native_layer_norm_backward. The input is seen as
// M rows of N elements (N the product of normalized_shape); each row is normalised by its mean and
// 1/sqrt(var + eps) (biased variance), then scaled by weight and shifted by bias where given. mean
// and rstd keep the leading dimensions and have 1s for the normalised ones, as PyTorch's.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "core/shape.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/operand.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// PyTorch's _check_layer_norm_inputs (aten/src/ATen/native/layer_norm.h), in its words; returns M
// (rows) and N (elements per row).
std::pair<std::int64_t, std::int64_t> check_layer_norm_inputs(const Tensor& input, IntArrayRef normalized_shape,
                                                              const Tensor& weight, const Tensor& bias) {
  const auto normalized_ndim = static_cast<std::int64_t>(normalized_shape.size());
  STRATA_CHECK(normalized_ndim >= 1, "Expected normalized_shape to be at least 1-dimensional, i.e., ",
               "containing at least one element, but got normalized_shape = ", shape_str(normalized_shape));
  STRATA_CHECK(!weight.defined() || IntArrayRef(weight.sizes()) == normalized_shape,
               "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
               shape_str(weight.sizes()), " and normalized_shape = ", shape_str(normalized_shape));
  STRATA_CHECK(!bias.defined() || IntArrayRef(bias.sizes()) == normalized_shape,
               "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
               shape_str(bias.sizes()), " and normalized_shape = ", shape_str(normalized_shape));
  const IntArrayRef shape = input.sizes();
  const std::int64_t ndim = input.dim();
  if (ndim < normalized_ndim || !(IntArrayRef(shape.data() + (ndim - normalized_ndim), normalized_shape.size()) == normalized_shape)) {
    std::ostringstream ss;
    ss << "Given normalized_shape=" << shape_str(normalized_shape) << ", expected input with shape [*";
    for (std::int64_t size : normalized_shape) ss << ", " << size;
    ss << "], but got input of size" << shape_str(shape);
    throw Error(ss.str());
  }
  const auto axis = static_cast<std::size_t>(ndim - normalized_ndim);
  std::int64_t m = 1, n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) (i < axis ? m : n) *= shape[i];
  return {m, n};
}

std::array<TensorSpec, 3> native_layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                                                 const Tensor& bias, double eps) {
  (void)eps;
  check_layer_norm_inputs(input, normalized_shape, weight, bias);
  check_floating(input.dtype(), "\"LayerNormKernelImpl\"");
  for (const Tensor* t : {&weight, &bias})
    STRATA_CHECK(!t->defined() || t->dtype() == input.dtype(), "expected scalar type ", input.dtype(),
                 " but found ", t->dtype());
  const std::size_t axis = input.sizes().size() - normalized_shape.size();
  DimVector stat_sizes(IntArrayRef(input.sizes().data(), axis));
  stat_sizes.resize(input.sizes().size(), 1);
  return {TensorSpec{DimVector(input.sizes()), input.dtype(), {}},
          TensorSpec{stat_sizes, input.dtype(), {}}, TensorSpec{stat_sizes, input.dtype(), {}}};
}

// Note [layer_norm accumulates in double]
// PyTorch's CPU kernel computes each row's moments with a cascade sum (RowwiseMoments) in the
// input's own type; strata sums in double for both dtypes, which is at least as accurate, so its
// float32 results agree with PyTorch's within the record's tolerance rather than bit for bit.
// rstd is 1 / sqrt(max(var, 0) + eps) and each output y = (x * rstd - mean * rstd) * w + b, the
// order of PyTorch's kernel.
void native_layer_norm_cpu(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& input,
                           IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  const std::pair<std::int64_t, std::int64_t> rows = check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const std::int64_t m = rows.first, n = rows.second;  // named: lambdas capture them (clang 14)
  if (out.numel() == 0 && mean.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const Operand x_c = Operand::contiguous(input);
  const Operand w_c = Operand::contiguous(weight);
  const Operand b_c = Operand::contiguous(bias);
  visit_floating(input.dtype(), "\"LayerNormKernelImpl\"", [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(*x_c);
    const T* w = weight.defined() ? data_of<T>(*w_c) : nullptr;
    const T* b = bias.defined() ? data_of<T>(*b_c) : nullptr;
    T* y = data_of<T>(out);
    T* mu = data_of<T>(mean);
    T* rs = data_of<T>(rstd);
    for (std::int64_t i = 0; i < m; ++i) {
      const T* row = x + i * n;
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += row[j];
      const double mean_d = n == 0 ? std::nan("") : sum / static_cast<double>(n);
      double sq = 0;
      for (std::int64_t j = 0; j < n; ++j) sq += (row[j] - mean_d) * (row[j] - mean_d);
      const double var = n == 0 ? std::nan("") : sq / static_cast<double>(n);
      const double rstd_d = 1.0 / std::sqrt(std::max(var, 0.0) + eps);
      mu[i] = static_cast<T>(mean_d);
      rs[i] = static_cast<T>(rstd_d);
      const double shift = -rstd_d * mean_d;
      T* yrow = y + i * n;
      for (std::int64_t j = 0; j < n; ++j) {
        double v = row[j] * rstd_d + shift;
        if (w) v *= w[j];
        if (b) v += b[j];
        yrow[j] = static_cast<T>(v);
      }
    }
  });
}

// ---- native_layer_norm_backward ----
// Note [A bool[3] argument is boxed as ints]
// strata's IValue has no list of bools: output_mask travels as an int list of 0s and 1s, and a
// dispatch mode prints it as [1, 1, 1] where PyTorch's prints [True, True, True].
std::array<TensorSpec, 3> native_layer_norm_backward_meta(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                                          const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                          const Tensor& bias, IntArrayRef output_mask) {
  const std::int64_t m = check_layer_norm_inputs(input, normalized_shape, weight, bias).first;
  check_floating(input.dtype(), "\"LayerNormBackwardKernelImpl\"");
  STRATA_CHECK(output_mask.size() == 3, "output_mask must have 3 elements, but got ", output_mask.size());
  STRATA_CHECK(grad_out.sizes() == input.sizes(), "Expected grad_out of size ", shape_str(input.sizes()), " but got ",
               shape_str(grad_out.sizes()));
  STRATA_CHECK(mean.numel() == m && rstd.numel() == m, "Expected mean and rstd of ", m, " elements, but got ", mean.numel(),
               " and ", rstd.numel());
  for (const Tensor* t : {&grad_out, &mean, &rstd, &weight, &bias})
    STRATA_CHECK(!t->defined() || t->dtype() == input.dtype(), "expected scalar type ", input.dtype(), " but found ",
                 t->dtype());
  const DimVector affine(normalized_shape);
  return {TensorSpec{DimVector(input.sizes()), input.dtype(), {}},
          TensorSpec{affine, input.dtype(), {}}, TensorSpec{affine, input.dtype(), {}}};
}

// Per row, with g = grad_out * weight and x̂ = (x - mean) * rstd (PyTorch's
// LayerNormBackwardKernelImplInternal, summing in double as the forward does):
//   dx = rstd * g + b * x + c, b = (mean * Σg - Σ(g x)) * rstd^3 / N, c = -b * mean - Σg * rstd / N;
//   dweight = Σ_rows grad_out * x̂, dbias = Σ_rows grad_out.
void native_layer_norm_backward_cpu(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                                    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                    const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                    IntArrayRef output_mask) {
  const std::pair<std::int64_t, std::int64_t> rows = check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const std::int64_t m = rows.first, n = rows.second;  // named: lambdas capture them (clang 14)
  const Operand dy_c = Operand::contiguous(grad_out);
  const Operand x_c = Operand::contiguous(input);
  const Operand mean_c = Operand::contiguous(mean);
  const Operand rstd_c = Operand::contiguous(rstd);
  const Operand w_c = Operand::contiguous(weight);
  visit_floating(input.dtype(), "\"LayerNormBackwardKernelImpl\"", [&](auto zero) {
    using T = decltype(zero);
    const T* dy = data_of<T>(*dy_c);
    const T* x = data_of<T>(*x_c);
    const T* mu = data_of<T>(*mean_c);
    const T* rs = data_of<T>(*rstd_c);
    const T* w = weight.defined() ? data_of<T>(*w_c) : nullptr;
    std::vector<double> dw(static_cast<std::size_t>(n), 0.0), db(static_cast<std::size_t>(n), 0.0);
    T* dx = data_of<T>(grad_input);
    for (std::int64_t i = 0; i < m; ++i) {
      const T* dy_row = dy + i * n;
      const T* x_row = x + i * n;
      const double mean_d = mu[i], rstd_d = rs[i];
      double sum_g = 0, sum_gx = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double g = w ? double(dy_row[j]) * w[j] : double(dy_row[j]);
        sum_g += g;
        sum_gx += g * x_row[j];
        dw[static_cast<std::size_t>(j)] += double(dy_row[j]) * (x_row[j] - mean_d) * rstd_d;
        db[static_cast<std::size_t>(j)] += dy_row[j];
      }
      if (!output_mask[0]) continue;
      const double scale = 1.0 / static_cast<double>(n);
      const double b = (mean_d * sum_g - sum_gx) * rstd_d * rstd_d * rstd_d * scale;
      const double c = -b * mean_d - sum_g * rstd_d * scale;
      for (std::int64_t j = 0; j < n; ++j) {
        const double g = w ? double(dy_row[j]) * w[j] : double(dy_row[j]);
        dx[i * n + j] = static_cast<T>(rstd_d * g + b * x_row[j] + c);
      }
    }
    if (!output_mask[0]) std::fill(dx, dx + grad_input.numel(), T(0));
    T* gw = data_of<T>(grad_weight);
    T* gb = data_of<T>(grad_bias);
    for (std::int64_t j = 0; j < n; ++j) {
      gw[j] = output_mask[1] ? static_cast<T>(dw[static_cast<std::size_t>(j)]) : T(0);
      gb[j] = output_mask[2] ? static_cast<T>(db[static_cast<std::size_t>(j)]) : T(0);
    }
  });
  (void)bias;
}

}  // namespace

// register_norm_ops(): the rows of norm_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/norm_ops_rows.inc"

}  // namespace strata::ops
