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
// A method whose free function PyTorch names differently (x.sum() and torch.sum) announces itself as
// the method first (Note [A method is announced as the method], ops/torch_function.h); the others
// forward.
#pragma once

#include "detach.h"
#include "functions.h"
#include "indexing.h"
#include "torch_function.h"

namespace strata {

inline Tensor Tensor::t() const {
  STRATA_TORCH_METHOD(t, "self");
  return strata::t(*this);
}
inline Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  STRATA_TORCH_METHOD(transpose, "self, dim0, dim1", dim0, dim1);
  return strata::transpose(*this, dim0, dim1);
}
inline Tensor Tensor::view(IntArrayRef size) const { return strata::view(*this, size); }
inline Tensor Tensor::reshape(IntArrayRef shape) const {
  STRATA_TORCH_METHOD(reshape, "self, shape", shape);
  return strata::reshape(*this, shape);
}
inline Tensor Tensor::expand(IntArrayRef size, bool implicit) const { return strata::expand(*this, size, implicit); }
inline Tensor Tensor::unsqueeze(std::int64_t dim) const {
  STRATA_TORCH_METHOD(unsqueeze, "self, dim", dim);
  return strata::unsqueeze(*this, dim);
}
inline Tensor Tensor::squeeze(std::int64_t dim) const {
  STRATA_TORCH_METHOD(squeeze, "self, dim", dim);
  return strata::squeeze(*this, dim);
}
inline Tensor Tensor::select(std::int64_t dim, std::int64_t index) const {
  STRATA_TORCH_METHOD(select, "self, dim, index", dim, index);
  return strata::select(*this, dim, index);
}
inline Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                            std::int64_t step) const {
  return strata::slice(*this, dim, start, end, step);
}
inline Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  STRATA_TORCH_METHOD(narrow, "self, dim, start, length", dim, start, length);
  return strata::narrow(*this, dim, start, length);
}
inline Tensor Tensor::contiguous() const { return strata::contiguous(*this); }
inline Tensor Tensor::to(ScalarType dtype) const { return strata::to(*this, dtype); }
inline Tensor Tensor::clone() const {
  STRATA_TORCH_METHOD(clone, "self");
  return strata::clone(*this);
}
inline Tensor Tensor::detach() const {
  STRATA_TORCH_METHOD(detach, "self");
  return strata::detach(*this);
}
inline Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  STRATA_TORCH_METHOD(add, "self, other, *, [alpha=1]", other, alpha);
  return strata::add(*this, other, alpha);
}
inline Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const {
  STRATA_TORCH_METHOD(add, "self, other, *, [alpha=1]", other, alpha);
  return strata::add(*this, other, alpha);
}
inline const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const { return strata::add_(*this, other, alpha); }
inline Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  STRATA_TORCH_METHOD(sub, "self, other, *, [alpha=1]", other, alpha);
  return strata::sub(*this, other, alpha);
}
inline Tensor Tensor::mul(const Tensor& other) const {
  STRATA_TORCH_METHOD(mul, "self, other", other);
  return strata::mul(*this, other);
}
inline Tensor Tensor::mul(const Scalar& other) const {
  STRATA_TORCH_METHOD(mul, "self, other", other);
  return strata::mul(*this, other);
}
inline const Tensor& Tensor::mul_(const Tensor& other) const { return strata::mul_(*this, other); }
inline Tensor Tensor::div(const Tensor& other) const {
  STRATA_TORCH_METHOD(div, "self, other", other);
  return strata::div(*this, other);
}
inline Tensor Tensor::neg() const {
  STRATA_TORCH_METHOD(neg, "self");
  return strata::neg(*this);
}
inline Tensor Tensor::exp() const {
  STRATA_TORCH_METHOD(exp, "self");
  return strata::exp(*this);
}
inline Tensor Tensor::relu() const {
  STRATA_TORCH_METHOD(relu, "self");
  return strata::relu(*this);
}
inline Tensor Tensor::sigmoid() const {
  STRATA_TORCH_METHOD(sigmoid, "self");
  return strata::sigmoid(*this);
}
inline Tensor Tensor::tanh() const {
  STRATA_TORCH_METHOD(tanh, "self");
  return strata::tanh(*this);
}
inline Tensor Tensor::gelu(std::string_view approximate) const { return strata::gelu(*this, approximate); }
inline Tensor Tensor::softmax(std::int64_t dim, std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(softmax, "self, dim, [dtype]", dim, dtype);
  return strata::softmax(*this, dim, dtype);
}
inline Tensor Tensor::mean(std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(mean, "self, *, [dtype]", dtype);
  return strata::mean(*this, dtype);
}
inline Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(mean, "self, dim, [keepdim=False], *, [dtype]", dim, keepdim, dtype);
  return strata::mean(*this, dim, keepdim, dtype);
}
inline Tensor Tensor::max() const {
  STRATA_TORCH_METHOD(max, "self");
  return strata::max(*this);
}
inline std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const {
  STRATA_TORCH_METHOD(max, "self, dim, [keepdim=False]", dim, keepdim);
  return strata::max(*this, dim, keepdim);
}
inline Tensor Tensor::argmax(std::optional<std::int64_t> dim, bool keepdim) const {
  STRATA_TORCH_METHOD(argmax, "self, [dim], [keepdim=False]", dim, keepdim);
  return strata::argmax(*this, dim, keepdim);
}
inline Tensor Tensor::mm(const Tensor& mat2) const {
  STRATA_TORCH_METHOD(mm, "self, mat2", mat2);
  return strata::mm(*this, mat2);
}
inline Tensor Tensor::dot(const Tensor& tensor) const {
  STRATA_TORCH_METHOD(dot, "self, tensor", tensor);
  return strata::dot(*this, tensor);
}
inline Tensor Tensor::mv(const Tensor& vec) const {
  STRATA_TORCH_METHOD(mv, "self, vec", vec);
  return strata::mv(*this, vec);
}
inline Tensor Tensor::sum(std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(sum, "self, *, [dtype]", dtype);
  return strata::sum(*this, dtype);
}
inline Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(sum, "self, dim, [keepdim=False], *, [dtype]", dim, keepdim, dtype);
  return strata::sum(*this, dim, keepdim, dtype);
}
inline const Tensor& Tensor::fill_(const Scalar& value) const { return strata::fill_(*this, value); }
inline const Tensor& Tensor::zero_() const { return strata::zero_(*this); }
inline const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const { return strata::copy_(*this, src, non_blocking); }
inline std::vector<Tensor> Tensor::split(std::int64_t split_size, std::int64_t dim) const {
  STRATA_TORCH_METHOD(split, "self, split_size, *, dim", split_size, dim);
  return strata::split(*this, split_size, dim);
}
inline std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, std::int64_t dim) const {
  STRATA_TORCH_METHOD(split, "self, split_size, *, dim", split_sizes, dim);
  return strata::split(*this, split_sizes, dim);
}
inline std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, std::int64_t dim) const {
  return strata::split_with_sizes(*this, split_sizes, dim);
}
inline std::vector<Tensor> Tensor::chunk(std::int64_t chunks, std::int64_t dim) const {
  STRATA_TORCH_METHOD(chunk, "self, chunks, [dim=0]", chunks, dim);
  return strata::chunk(*this, chunks, dim);
}
inline Tensor Tensor::permute(IntArrayRef dims) const {
  STRATA_TORCH_METHOD(permute, "self, dims", dims);
  return strata::permute(*this, dims);
}
inline Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  STRATA_TORCH_METHOD(flatten, "self, [start_dim=0], [end_dim=-1]", start_dim, end_dim);
  return strata::flatten(*this, start_dim, end_dim);
}
inline Tensor Tensor::bmm(const Tensor& mat2) const {
  STRATA_TORCH_METHOD(bmm, "self, mat2", mat2);
  return strata::bmm(*this, mat2);
}
inline Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  STRATA_TORCH_METHOD(baddbmm, "self, batch1, batch2, *, [beta=1], [alpha=1]", batch1, batch2, beta, alpha);
  return strata::baddbmm(*this, batch1, batch2, beta, alpha);
}
inline std::tuple<Tensor, Tensor> Tensor::sort(std::int64_t dim, bool descending) const {
  STRATA_TORCH_METHOD(sort, "self, [dim=-1], [descending=False]", dim, descending);
  return strata::sort(*this, dim, descending);
}
inline std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t dim, bool largest, bool sorted) const {
  STRATA_TORCH_METHOD(topk, "self, k, [dim=-1], [largest=True], [sorted=True]", k, dim, largest, sorted);
  return strata::topk(*this, k, dim, largest, sorted);
}
// Math, comparisons and masks.
inline Tensor Tensor::sqrt() const {
  STRATA_TORCH_METHOD(sqrt, "self");
  return strata::sqrt(*this);
}
inline Tensor Tensor::rsqrt() const {
  STRATA_TORCH_METHOD(rsqrt, "self");
  return strata::rsqrt(*this);
}
inline Tensor Tensor::log() const {
  STRATA_TORCH_METHOD(log, "self");
  return strata::log(*this);
}
inline Tensor Tensor::abs() const {
  STRATA_TORCH_METHOD(abs, "self");
  return strata::abs(*this);
}
inline Tensor Tensor::sgn() const {
  STRATA_TORCH_METHOD(sgn, "self");
  return strata::sgn(*this);
}
inline Tensor Tensor::sin() const {
  STRATA_TORCH_METHOD(sin, "self");
  return strata::sin(*this);
}
inline Tensor Tensor::cos() const {
  STRATA_TORCH_METHOD(cos, "self");
  return strata::cos(*this);
}
inline Tensor Tensor::pow(const Scalar& exponent) const {
  STRATA_TORCH_METHOD(pow, "self, exponent", exponent);
  return strata::pow(*this, exponent);
}
inline Tensor Tensor::pow(const Tensor& exponent) const {
  STRATA_TORCH_METHOD(pow, "self, exponent", exponent);
  return strata::pow(*this, exponent);
}
inline Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  STRATA_TORCH_METHOD(clamp, "self, [min], [max]", min, max);
  return strata::clamp(*this, min, max);
}
inline Tensor Tensor::eq(const Tensor& other) const {
  STRATA_TORCH_METHOD(eq, "self, other", other);
  return strata::eq(*this, other);
}
inline Tensor Tensor::eq(const Scalar& other) const {
  STRATA_TORCH_METHOD(eq, "self, other", other);
  return strata::eq(*this, other);
}
inline Tensor Tensor::ne(const Tensor& other) const {
  STRATA_TORCH_METHOD(ne, "self, other", other);
  return strata::ne(*this, other);
}
inline Tensor Tensor::ne(const Scalar& other) const {
  STRATA_TORCH_METHOD(ne, "self, other", other);
  return strata::ne(*this, other);
}
inline Tensor Tensor::gt(const Tensor& other) const {
  STRATA_TORCH_METHOD(gt, "self, other", other);
  return strata::gt(*this, other);
}
inline Tensor Tensor::gt(const Scalar& other) const {
  STRATA_TORCH_METHOD(gt, "self, other", other);
  return strata::gt(*this, other);
}
inline Tensor Tensor::ge(const Tensor& other) const {
  STRATA_TORCH_METHOD(ge, "self, other", other);
  return strata::ge(*this, other);
}
inline Tensor Tensor::ge(const Scalar& other) const {
  STRATA_TORCH_METHOD(ge, "self, other", other);
  return strata::ge(*this, other);
}
inline Tensor Tensor::lt(const Tensor& other) const {
  STRATA_TORCH_METHOD(lt, "self, other", other);
  return strata::lt(*this, other);
}
inline Tensor Tensor::lt(const Scalar& other) const {
  STRATA_TORCH_METHOD(lt, "self, other", other);
  return strata::lt(*this, other);
}
inline Tensor Tensor::le(const Tensor& other) const {
  STRATA_TORCH_METHOD(le, "self, other", other);
  return strata::le(*this, other);
}
inline Tensor Tensor::le(const Scalar& other) const {
  STRATA_TORCH_METHOD(le, "self, other", other);
  return strata::le(*this, other);
}
inline Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  STRATA_TORCH_METHOD(masked_fill, "self, mask, value", mask, value);
  return strata::masked_fill(*this, mask, value);
}
inline const Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  return strata::masked_fill_(*this, mask, value);
}
inline Tensor Tensor::triu(std::int64_t diagonal) const {
  STRATA_TORCH_METHOD(triu, "self, [diagonal=0]", diagonal);
  return strata::triu(*this, diagonal);
}
inline Tensor Tensor::tril(std::int64_t diagonal) const {
  STRATA_TORCH_METHOD(tril, "self, [diagonal=0]", diagonal);
  return strata::tril(*this, diagonal);
}
inline bool Tensor::equal(const Tensor& other) const { return strata::equal(*this, other); }
inline bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return strata::allclose(*this, other, rtol, atol, equal_nan);
}

}  // namespace strata
