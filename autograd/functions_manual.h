// autograd/functions_manual.h: the helper formulas derivatives.yaml calls by name, written as
// PyTorch's torch/csrc/autograd/FunctionsManual.cpp defines them, so the ops they dispatch (and so
// what a dispatch mode sees during backward) are PyTorch's.
#pragma once

#include <optional>

#include "../core/tensor.h"
#include "../ops/functions.h"

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

// Gradient of as_strided(input, sizes, strides, storage_offset) given the input's geometry
// (autograd/as_strided_backward.cpp). Throws for geometries whose elements may overlap.
Tensor as_strided_backward(Tensor grad, IntArrayRef input_sizes, IntArrayRef input_strides, std::int64_t input_offset,
                           IntArrayRef sizes, IntArrayRef strides, std::optional<std::int64_t> storage_offset);

// grad.unsqueeze(dim) if sizes[dim] == 1 (the gradient of squeeze.dim), else grad.
Tensor unsqueeze_to(const Tensor& grad, std::int64_t dim, IntArrayRef sizes);

}  // namespace strata::autograd
