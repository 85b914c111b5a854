// autograd/formulas/functions_manual.h: the helper formulas derivatives.yaml calls by name, written as
// PyTorch's torch/csrc/autograd/FunctionsManual.cpp defines them, so the ops they dispatch (and so
// what a dispatch mode sees during backward) are PyTorch's.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "../../core/tensor.h"
#include "../../ops/functions.h"

namespace strata::autograd {

// t * s, or t itself when s is 1 (no op dispatched). A product a formula just made moves through
// without a reference-count round trip; a gradient it was given is copied only when returned.
// Inline: most calls (alpha and beta of 1) return t, and a call cost more than the test.
inline Tensor maybe_multiply(Tensor&& t, const Scalar& s) {  // a fresh product: returned as it is
  if (s.to_double() == 1.0) return std::move(t);
  return mul(t, s);  // mul.Scalar, as C++'s `t * s` dispatches
}
inline Tensor maybe_multiply(const Tensor& t, const Scalar& s) {  // a gradient: copied only when returned
  if (s.to_double() == 1.0) return t;
  return mul(t, s);
}

// Gradient of mat1 in mat1 @ mat2: grad @ mat2^T, computed as (mat2 @ grad^T)^T when mat1 was
// column-major, so the gradient comes out column-major too.
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, IntArrayRef mat1_sizes, IntArrayRef mat1_strides,
                        const Scalar& alpha);
// Gradient of mat2: mat1^T @ grad, or (grad^T @ mat1)^T when mat2 was column-major (as w.t() is).
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef mat2_sizes, IntArrayRef mat2_strides,
                        const Scalar& alpha);

// Gradient of sum over `dims`: grad unsqueezed back at reduced dims (if not keepdim), expanded to sizes.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim);

// Gradient of cumsum along dim: each input element feeds every later partial sum, so its gradient
// is the sum of grad from its index to the end, the reversed running sum flip(cumsum(flip(grad))).
// grad itself when there is nothing to reverse (at most one element, or dim of size 1).
Tensor cumsum_backward(const Tensor& grad, std::int64_t dim);

// Gradient of as_strided(input, sizes, strides, storage_offset) given the input's geometry
// (autograd/formulas/as_strided_backward.cpp). Throws for geometries whose elements may overlap.
Tensor as_strided_backward(Tensor grad, IntArrayRef input_sizes, IntArrayRef input_strides, std::int64_t input_offset,
                           IntArrayRef sizes, IntArrayRef strides, std::optional<std::int64_t> storage_offset);

// The gradient of permute(self, dims): grad permuted by the inverse permutation.
Tensor permute_backwards(const Tensor& grad, IntArrayRef fwd_dims);

// PyTorch's constant_pad_nd_backward: grad padded by the negated pads (cropped where self was padded), with 0.
Tensor constant_pad_nd_backward(const Tensor& grad, IntArrayRef pad);

// grad.unsqueeze(dim) if sizes[dim] == 1 (the gradient of squeeze.dim), else grad.
Tensor unsqueeze_to(const Tensor& grad, std::int64_t dim, IntArrayRef sizes);

// Gradient of mean over `dims` (None or [] meaning all): sum_backward divided by the number of
// elements each output averaged (`numel` for a full reduction).
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, std::int64_t numel, bool keepdim);

// Gradient of max() and other value-selecting full reductions: grad shared evenly among the inputs
// equal to `value` (among the NaNs when value is NaN).
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& input, const Tensor& value);

// Gradient of _softmax_backward_data with respect to its output argument.
Tensor softmax_double_backward(const Tensor& grad, const Tensor& grad_output, std::int64_t dim, const Tensor& output);

// Gradient of gelu_backward with respect to self (its second derivative times grad and grad_output).
Tensor gelu_double_backward(const Tensor& ggI, const Tensor& gO, const Tensor& input, std::string_view approximate);

// Gradient of embedding with respect to weight (sparse gradients are refused: strata has no sparse tensors).
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights, std::int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse);
// Gradient of embedding_dense_backward with respect to grad_output: the rows of grad the indices
// pick, with those of padding_idx zero.
Tensor embedding_dense_double_backward(const Tensor& grad, const Tensor& indices, std::int64_t padding_idx);

// native_dropout's backward while grad mode is on: grad * (mask * scale), differentiable again.
Tensor infinitely_differentiable_native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);
// Gradient of native_dropout_backward with respect to grad_output.
Tensor native_dropout_double_backward(const Tensor& ggI, const Tensor& grad, const Tensor& mask, double scale);

// The gradients of native_layer_norm_backward's input, weight and grad_out (PyTorch's
// layer_norm_double_backward; autograd/formulas/layer_norm_double_backward.cpp), given the gradients
// ggI, ggG, ggB of its three outputs (each may be undefined) and an undefined gamma for no weight.
std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& input, const Tensor& gamma, const Tensor& ggI,
                                                              const Tensor& ggG, const Tensor& ggB, const Tensor& gO,
                                                              const Tensor& save_mean, const Tensor& save_invstd,
                                                              IntArrayRef normalized_shape);

// PyTorch's not_implemented(name, reason): the error a formula strata cannot compute raises.
[[noreturn]] void not_implemented(const char* name, const char* reason);

}  // namespace strata::autograd
