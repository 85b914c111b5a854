// autograd/formulas/functions_manual.cpp: helper formulas (see the header).
#include "autograd/formulas/functions_manual.h"

#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::autograd {

Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, IntArrayRef mat1_sizes, IntArrayRef mat1_strides,
                        const Scalar& alpha) {
  if (mat1_strides[0] == 1 && mat1_strides[1] == mat1_sizes[0]) {
    return maybe_multiply(t(mm(mat2, t(grad))), alpha);
  }
  return maybe_multiply(mm(grad, t(mat2)), alpha);
}

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef mat2_sizes, IntArrayRef mat2_strides,
                        const Scalar& alpha) {
  if (mat2_strides[0] == 1 && mat2_strides[1] == mat2_sizes[0]) {
    return maybe_multiply(t(mm(t(grad), mat1)), alpha);
  }
  return maybe_multiply(mm(t(mat1), grad), alpha);
}

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim) {
  if (!keepdim && !sizes.empty() && dims && !dims->empty()) {
    SmallVector<bool, 5> reduced(sizes.size(), false);
    for (std::int64_t d : *dims) reduced[static_cast<std::size_t>(wrap_dim(d, static_cast<std::int64_t>(sizes.size())))] = true;
    Tensor res = grad;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      if (reduced[i]) res = unsqueeze(res, static_cast<std::int64_t>(i));
    return expand(res, sizes);
  }
  return expand(grad, sizes);
}

Tensor cumsum_backward(const Tensor& grad, std::int64_t dim) {
  if (grad.numel() <= 1 || grad.size(dim) == 1) return grad;
  const IntArrayRef dims(&dim, 1);
  return flip(cumsum(flip(grad, dims), dim), dims);
}

Tensor permute_backwards(const Tensor& grad, IntArrayRef fwd_dims) {
  const auto ndim = static_cast<std::int64_t>(fwd_dims.size());
  DimVector dims(fwd_dims.size(), 0);
  for (std::size_t i = 0; i < fwd_dims.size(); ++i) dims[static_cast<std::size_t>(wrap_dim(fwd_dims[i], ndim))] = static_cast<std::int64_t>(i);
  return permute(grad, dims);
}

Tensor constant_pad_nd_backward(const Tensor& grad, IntArrayRef pad) {
  DimVector negated(pad);
  for (std::int64_t& p : negated) p = -p;
  return constant_pad_nd(grad, negated, 0);
}

Tensor unsqueeze_to(const Tensor& grad, std::int64_t dim, IntArrayRef sizes) {
  if (sizes.empty()) return grad;
  const auto d = static_cast<std::size_t>(wrap_dim(dim, static_cast<std::int64_t>(sizes.size())));
  return sizes[d] == 1 ? unsqueeze(grad, static_cast<std::int64_t>(d)) : grad;
}

Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, std::int64_t numel, bool keepdim) {
  const bool all_reduce = !dims || dims->empty();
  std::int64_t n = 1;  // PyTorch's _safe_size: the product of the reduced sizes
  if (all_reduce) {
    n = numel;
  } else if (!sizes.empty()) {
    for (std::int64_t d : *dims) n *= sizes[static_cast<std::size_t>(wrap_dim(d, static_cast<std::int64_t>(sizes.size())))];
  }
  return div(sum_backward(grad, sizes, dims, keepdim), Scalar(n));  // PyTorch's grad / n, C++'s Tensor / SymInt: div.Scalar
}

// PyTorch's form for subclasses, modes and CUDA, which is the one a mode or a wrapper sees:
//   mask = (input == value).logical_or_(input.isnan().logical_and(value.isnan())); mask * (grad / mask.sum())
// (its plain-CPU form reads value.isnan() with item() and fills new_zeros through the mask, to the same
// values; nothing but a mode could tell them apart). It needs no data, so it also runs on meta tensors.
// The right operand of each call runs first: Note [An op's operands are dispatched in a written order].
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& input, const Tensor& value) {
  const Tensor value_nan = isnan(value);
  const Tensor input_and_value_nan = logical_and(isnan(input), value_nan);
  const Tensor mask = logical_or_(eq(input, value), input_and_value_nan);
  const Tensor count = sum(mask);
  return mul(mask, div(grad, count));
}

// grad_output * grad - (output * grad_output).sum(dim, true) * grad - grad_output * (output * grad).sum(dim, true):
// PyTorch's binary runs the operands of a - b - c right to left, so the last term first
// (Note [An op's operands are dispatched in a written order]).
Tensor softmax_double_backward(const Tensor& grad, const Tensor& grad_output, std::int64_t dim, const Tensor& output) {
  const Tensor third = mul(grad_output, sum(mul(output, grad), {dim}, true));
  const Tensor second = mul(sum(mul(output, grad_output), {dim}, true), grad);
  const Tensor first = mul(grad_output, grad);
  return sub(sub(first, second), third);
}

// The second derivative of gelu times ggI and gO. Tanh form: gelu = f (1 + t) with f = x / 2,
// t = tanh(inner), g = 1 - t^2, h = inner' = beta (1 + 3 kappa x^2), so gelu' = (1 + t) / 2 + f g h and
//   gelu'' = g h + f g' h + f g h',  g' = -2 t g h,  h' = 6 kappa beta x
// (sech^2 written as 1 - tanh^2: strata has no cosh). Exact form: gelu'' = 2 pdf - x^2 pdf with
// pdf = exp(-x^2 / 2) / sqrt(2 pi). The ops dispatched differ from PyTorch's gelu_double_backward.
Tensor gelu_double_backward(const Tensor& ggI, const Tensor& gO, const Tensor& input, std::string_view approximate) {
  constexpr double kBeta = 0.7978845608028654;   // sqrt(2 / pi)
  constexpr double kKappa = 0.044715;
  constexpr double kAlpha = 0.3989422804014327;  // 1 / sqrt(2 pi)
  const Tensor x_sq = mul(input, input);
  Tensor d2;
  if (approximate == "tanh") {
    const Tensor inner = mul(add(input, mul(mul(x_sq, input), Scalar(kKappa))), Scalar(kBeta));
    const Tensor tanh_inner = tanh(inner);
    const Tensor f = mul(input, Scalar(0.5));
    const Tensor g = add(neg(mul(tanh_inner, tanh_inner)), Scalar(1));
    const Tensor h = mul(add(mul(x_sq, Scalar(3 * kKappa)), Scalar(1)), Scalar(kBeta));
    const Tensor gh = mul(g, h);  // f' g h from both (1 + t) / 2 and f g h
    const Tensor g_prime = mul(mul(mul(g, tanh_inner), h), Scalar(-2.0));
    const Tensor g_prime_fh = mul(mul(f, h), g_prime);
    const Tensor h_prime = mul(input, Scalar(6 * kKappa * kBeta));  // first: Note [An op's operands are dispatched in a written order]
    const Tensor h_prime_fg = mul(mul(f, g), h_prime);
    d2 = add(add(gh, g_prime_fh), h_prime_fg);
  } else {
    const Tensor pdf = mul(exp(mul(x_sq, Scalar(-0.5))), Scalar(kAlpha));
    const Tensor x_sq_pdf = mul(x_sq, pdf);  // first: Note [An op's operands are dispatched in a written order]
    d2 = sub(mul(pdf, Scalar(2.0)), x_sq_pdf);
  }
  return mul(mul(ggI, gO), d2);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights, std::int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  if (sparse) not_implemented("embedding", "strata has no sparse tensors, so embedding(sparse=True) has no backward");
  return embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
}

Tensor embedding_dense_double_backward(const Tensor& grad, const Tensor& indices, std::int64_t padding_idx) {
  const Tensor picked = embedding(grad, indices);
  if (padding_idx < 0 || padding_idx >= grad.size(0)) return picked;
  // The gradient rows of padding_idx are zero: picked * (indices != padding_idx), as a [..., 1] mask.
  // The mask is built in place, not by tensor(values): that would dispatch aten::lift_fresh, which
  // PyTorch's formula (a masked_fill_) does not.
  const Tensor keep = strata::detail::make_contiguous_tensor({grad.size(0)}, ScalarType::Float64, Device::CPU);
  double* k = keep.data_ptr<double>();
  for (std::int64_t i = 0; i < grad.size(0); ++i) k[i] = i == padding_idx ? 0.0 : 1.0;
  const Tensor row_keep = to(unsqueeze(keep, 1), grad.dtype());
  return mul(picked, embedding(row_keep, indices));
}

Tensor infinitely_differentiable_native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  return mul(grad, mul(to(mask, grad.dtype()), Scalar(scale)));
}

Tensor native_dropout_double_backward(const Tensor& ggI, const Tensor& grad, const Tensor& mask, double scale) {
  // ggI.type_as(grad) * (mask.type_as(grad) * scale): PyTorch runs the right operand first (Note [An
  // op's operands are dispatched in a written order]).
  const Tensor scaled_mask = mul(to(mask, grad.dtype()), Scalar(scale));
  return mul(to(ggI, grad.dtype()), scaled_mask);
}

void not_implemented(const char* name, const char* reason) {
  throw Error(strata::detail::str_cat("the derivative for '", name, "' is not implemented. ", reason));
}

}  // namespace strata::autograd
