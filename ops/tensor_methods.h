// ops/tensor_methods.h: the inline definitions of Tensor's LibTorch-style methods (declared in
// core/tensor.h), each a forward to the free function in ops/functions.h; ops/functions.h includes
// this file, so whoever can call mm(x, w) can call x.mm(w).
//
// Note [Tensor methods are defined in ops]
// core/ is below ops/ (core/ includes nothing of ops/, and the dispatcher does not know the op
// table), so core/tensor.h cannot see the functions a method forwards to. As in LibTorch, where
// TensorBody.h declares the methods and the generated operator headers define them, the methods are
// declared on Tensor and defined inline here, above the free functions: one implementation per op
// (the free function), no extra call (the forward inlines), and Tensor's layout and its accessors
// on the dispatch path are unchanged. matmul lives in nn/ (nn/functional.h), which defines its method.
// A translation unit that includes only core/tensor.h and calls x.mm(w) does not link: include
// ops/functions.h (or strata.h).
#pragma once

#include "detach.h"
#include "functions.h"

namespace strata {

inline Tensor Tensor::t() const { return strata::t(*this); }
inline Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const { return strata::transpose(*this, dim0, dim1); }
inline Tensor Tensor::view(IntArrayRef size) const { return strata::view(*this, size); }
inline Tensor Tensor::reshape(IntArrayRef shape) const { return strata::reshape(*this, shape); }
inline Tensor Tensor::expand(IntArrayRef size, bool implicit) const { return strata::expand(*this, size, implicit); }
inline Tensor Tensor::unsqueeze(std::int64_t dim) const { return strata::unsqueeze(*this, dim); }
inline Tensor Tensor::squeeze(std::int64_t dim) const { return strata::squeeze(*this, dim); }
inline Tensor Tensor::select(std::int64_t dim, std::int64_t index) const { return strata::select(*this, dim, index); }
inline Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                            std::int64_t step) const {
  return strata::slice(*this, dim, start, end, step);
}
inline Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  return strata::narrow(*this, dim, start, length);
}
inline Tensor Tensor::contiguous() const { return strata::contiguous(*this); }
inline Tensor Tensor::to(ScalarType dtype) const { return strata::to(*this, dtype); }
inline Tensor Tensor::clone() const { return strata::clone(*this); }
inline Tensor Tensor::detach() const { return strata::detach(*this); }
inline Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return strata::add(*this, other, alpha); }
inline Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const { return strata::add(*this, other, alpha); }
inline const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const { return strata::add_(*this, other, alpha); }
inline Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return strata::sub(*this, other, alpha); }
inline Tensor Tensor::mul(const Tensor& other) const { return strata::mul(*this, other); }
inline Tensor Tensor::mul(const Scalar& other) const { return strata::mul(*this, other); }
inline const Tensor& Tensor::mul_(const Tensor& other) const { return strata::mul_(*this, other); }
inline Tensor Tensor::div(const Tensor& other) const { return strata::div(*this, other); }
inline Tensor Tensor::neg() const { return strata::neg(*this); }
inline Tensor Tensor::exp() const { return strata::exp(*this); }
inline Tensor Tensor::relu() const { return strata::relu(*this); }
inline Tensor Tensor::sigmoid() const { return strata::sigmoid(*this); }
inline Tensor Tensor::tanh() const { return strata::tanh(*this); }
inline Tensor Tensor::gelu(std::string_view approximate) const { return strata::gelu(*this, approximate); }
inline Tensor Tensor::softmax(std::int64_t dim, std::optional<ScalarType> dtype) const { return strata::softmax(*this, dim, dtype); }
inline Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return strata::mean(*this, dtype); }
inline Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return strata::mean(*this, dim, keepdim, dtype);
}
inline Tensor Tensor::max() const { return strata::max(*this); }
inline std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const { return strata::max(*this, dim, keepdim); }
inline Tensor Tensor::argmax(std::optional<std::int64_t> dim, bool keepdim) const { return strata::argmax(*this, dim, keepdim); }
inline Tensor Tensor::mm(const Tensor& mat2) const { return strata::mm(*this, mat2); }
inline Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return strata::sum(*this, dtype); }
inline Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return strata::sum(*this, dim, keepdim, dtype);
}
inline const Tensor& Tensor::fill_(const Scalar& value) const { return strata::fill_(*this, value); }
inline const Tensor& Tensor::zero_() const { return strata::zero_(*this); }
inline const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const { return strata::copy_(*this, src, non_blocking); }
// Math, comparisons and masks.
inline Tensor Tensor::sqrt() const { return strata::sqrt(*this); }
inline Tensor Tensor::rsqrt() const { return strata::rsqrt(*this); }
inline Tensor Tensor::log() const { return strata::log(*this); }
inline Tensor Tensor::abs() const { return strata::abs(*this); }
inline Tensor Tensor::sgn() const { return strata::sgn(*this); }
inline Tensor Tensor::sin() const { return strata::sin(*this); }
inline Tensor Tensor::cos() const { return strata::cos(*this); }
inline Tensor Tensor::pow(const Scalar& exponent) const { return strata::pow(*this, exponent); }
inline Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return strata::clamp(*this, min, max);
}
inline Tensor Tensor::eq(const Tensor& other) const { return strata::eq(*this, other); }
inline Tensor Tensor::eq(const Scalar& other) const { return strata::eq(*this, other); }
inline Tensor Tensor::ne(const Tensor& other) const { return strata::ne(*this, other); }
inline Tensor Tensor::ne(const Scalar& other) const { return strata::ne(*this, other); }
inline Tensor Tensor::gt(const Tensor& other) const { return strata::gt(*this, other); }
inline Tensor Tensor::gt(const Scalar& other) const { return strata::gt(*this, other); }
inline Tensor Tensor::ge(const Tensor& other) const { return strata::ge(*this, other); }
inline Tensor Tensor::ge(const Scalar& other) const { return strata::ge(*this, other); }
inline Tensor Tensor::lt(const Tensor& other) const { return strata::lt(*this, other); }
inline Tensor Tensor::lt(const Scalar& other) const { return strata::lt(*this, other); }
inline Tensor Tensor::le(const Tensor& other) const { return strata::le(*this, other); }
inline Tensor Tensor::le(const Scalar& other) const { return strata::le(*this, other); }
inline Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return strata::masked_fill(*this, mask, value); }
inline const Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  return strata::masked_fill_(*this, mask, value);
}
inline Tensor Tensor::triu(std::int64_t diagonal) const { return strata::triu(*this, diagonal); }
inline Tensor Tensor::tril(std::int64_t diagonal) const { return strata::tril(*this, diagonal); }
inline bool Tensor::equal(const Tensor& other) const { return strata::equal(*this, other); }
inline bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return strata::allclose(*this, other, rtol, atol, equal_nan);
}

}  // namespace strata
