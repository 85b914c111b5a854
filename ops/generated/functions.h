// ops/generated/functions.h: written by scripts/gen-ops from the op rows, ops/native/*_ops.yaml
// (Note [A row holds its op's facts], ops/boxing.h); do not edit. One front-end function per row
// whose front_end is a torch name or internal: it announces itself to function modes under PyTorch's
// name (a torch name), then calls its TypedOperator (ops/typed_operator.h); the definitions are
// written at build time (<build>/ops/generated/functions.cpp). ops/functions.h includes this file and
// declares the functions written by hand.
#pragma once

#include <optional>
#include <string_view>

#include "../../core/generator.h"
#include "../../core/tensor.h"

namespace strata {

// ---- ops/native/activation_ops.yaml ----
// aten::sigmoid(Tensor self) -> Tensor
Tensor sigmoid(const Tensor& self);
// aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);
// x * sigmoid(x), the activation of Llama's feed-forward layers.
// aten::silu(Tensor self) -> Tensor
Tensor silu(const Tensor& self);
// aten::silu_backward(Tensor grad_output, Tensor self) -> Tensor
Tensor silu_backward(const Tensor& grad_output, const Tensor& self);
// aten::tanh(Tensor self) -> Tensor
Tensor tanh(const Tensor& self);
// aten::tanh_backward(Tensor grad_output, Tensor output) -> Tensor
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
// approximate: "none" (the exact erf form) or "tanh".
// aten::gelu(Tensor self, *, str approximate='none') -> Tensor
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
// aten::gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate = "none");

// ---- ops/native/compare_ops.yaml ----
// aten::eq.Tensor(Tensor self, Tensor other) -> Tensor
Tensor eq(const Tensor& self, const Tensor& other);
// aten::eq.Scalar(Tensor self, Scalar other) -> Tensor
Tensor eq(const Tensor& self, const Scalar& other);
// aten::ne.Tensor(Tensor self, Tensor other) -> Tensor
Tensor ne(const Tensor& self, const Tensor& other);
// aten::ne.Scalar(Tensor self, Scalar other) -> Tensor
Tensor ne(const Tensor& self, const Scalar& other);
// aten::gt.Tensor(Tensor self, Tensor other) -> Tensor
Tensor gt(const Tensor& self, const Tensor& other);
// aten::gt.Scalar(Tensor self, Scalar other) -> Tensor
Tensor gt(const Tensor& self, const Scalar& other);
// aten::ge.Tensor(Tensor self, Tensor other) -> Tensor
Tensor ge(const Tensor& self, const Tensor& other);
// aten::ge.Scalar(Tensor self, Scalar other) -> Tensor
Tensor ge(const Tensor& self, const Scalar& other);
// aten::lt.Tensor(Tensor self, Tensor other) -> Tensor
Tensor lt(const Tensor& self, const Tensor& other);
// aten::lt.Scalar(Tensor self, Scalar other) -> Tensor
Tensor lt(const Tensor& self, const Scalar& other);
// aten::le.Tensor(Tensor self, Tensor other) -> Tensor
Tensor le(const Tensor& self, const Tensor& other);
// aten::le.Scalar(Tensor self, Scalar other) -> Tensor
Tensor le(const Tensor& self, const Scalar& other);
// aten::isnan(Tensor self) -> Tensor
Tensor isnan(const Tensor& self);
// Whether both elements are nonzero, as bools.
// aten::logical_and(Tensor self, Tensor other) -> Tensor
Tensor logical_and(const Tensor& self, const Tensor& other);
// self = whether both elements are nonzero, in self's dtype.
// aten::logical_and_(Tensor(a!) self, Tensor other) -> Tensor(a!)
const Tensor& logical_and_(const Tensor& self, const Tensor& other);
// self = whether either element is nonzero, in self's dtype.
// aten::logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)
const Tensor& logical_or_(const Tensor& self, const Tensor& other);

// ---- ops/native/dropout_ops.yaml ----
// aten::native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale);

// ---- ops/native/embedding_ops.yaml ----
// aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
//   bool sparse=False) -> Tensor
Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx,
//   bool scale_grad_by_freq) -> Tensor
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, std::int64_t num_weights,
                                std::int64_t padding_idx, bool scale_grad_by_freq);

// ---- ops/native/factory_ops.yaml ----
// aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format = std::nullopt);
// aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
const Tensor& fill_(const Tensor& self, const Scalar& value);
// aten::zero_(Tensor(a!) self) -> Tensor(a!)
const Tensor& zero_(const Tensor& self);
// aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
const Tensor& copy_(const Tensor& self, const Tensor& src, bool non_blocking = false);

// ---- ops/native/join_ops.yaml ----
// The tensors joined along `dim` into a new tensor of their promoted dtype; 1-D empty tensors are
// skipped (PyTorch's legacy rule). cat({a, b}, 1).
// aten::cat(Tensor[] tensors, int dim=0) -> Tensor
Tensor cat(TensorList tensors, std::int64_t dim = 0);
// The tensors, all of one size, joined along a new dimension `dim`: cat of their unsqueezes.
// aten::stack(Tensor[] tensors, int dim=0) -> Tensor
Tensor stack(TensorList tensors, std::int64_t dim = 0);

// ---- ops/native/linalg_ops.yaml ----
// aten::mm(Tensor self, Tensor mat2) -> Tensor
Tensor mm(const Tensor& self, const Tensor& mat2);
// aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// A batch of products: out[i] = self[i] @ mat2[i], for 3-D operands [b, n, m] and [b, m, p].
// aten::bmm(Tensor self, Tensor mat2) -> Tensor
Tensor bmm(const Tensor& self, const Tensor& mat2);
// beta * self + alpha * bmm(batch1, batch2), self broadcast to [b, n, p].
// aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// (float(self) * scale_a) @ (float(mat2) * scale_b) + bias, as out_dtype (default self's): float8 or
// int8 operands, float32 one-element scales (Note [_scaled_mm on CPU]). An undefined bias or
// scale_result is None.
// aten::_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None,
//   Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False) -> Tensor
Tensor _scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                  const Tensor& bias = {}, const Tensor& scale_result = {},
                  std::optional<ScalarType> out_dtype = std::nullopt, bool use_fast_accum = false);

// ---- ops/native/loss_ops.yaml ----
// aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction,
//   SymInt ignore_index, Tensor total_weight) -> Tensor
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         std::int64_t reduction, std::int64_t ignore_index, const Tensor& total_weight);

// ---- ops/native/mask_ops.yaml ----
// self where condition holds, else other: broadcast together, in their promoted dtype.
// aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
// A copy of self (broadcast with mask) with value where mask holds.
// aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
// aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value);
// The upper triangle of the last two dimensions (on and above the diagonal-th diagonal), zeros below.
// aten::triu(Tensor self, int diagonal=0) -> Tensor
Tensor triu(const Tensor& self, std::int64_t diagonal = 0);
// The lower triangle of the last two dimensions (on and below the diagonal-th diagonal), zeros above.
// aten::tril(Tensor self, int diagonal=0) -> Tensor
Tensor tril(const Tensor& self, std::int64_t diagonal = 0);

// ---- ops/native/math_ops.yaml ----
// aten::sqrt(Tensor self) -> Tensor
Tensor sqrt(const Tensor& self);
// 1 / sqrt(x).
// aten::rsqrt(Tensor self) -> Tensor
Tensor rsqrt(const Tensor& self);
// The natural logarithm.
// aten::log(Tensor self) -> Tensor
Tensor log(const Tensor& self);
// aten::sin(Tensor self) -> Tensor
Tensor sin(const Tensor& self);
// aten::cos(Tensor self) -> Tensor
Tensor cos(const Tensor& self);
// aten::abs(Tensor self) -> Tensor
Tensor abs(const Tensor& self);
// The sign, -1, 0 or 1 in the input's dtype (abs's derivative).
// aten::sgn(Tensor self) -> Tensor
Tensor sgn(const Tensor& self);
// self ** exponent, in self's dtype promoted with the exponent's.
// aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
Tensor pow(const Tensor& self, const Scalar& exponent);
// self ** exponent elementwise, broadcast, in their promoted dtype.
// aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
Tensor pow(const Tensor& self, const Tensor& exponent);
// aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)
const Tensor& pow_(const Tensor& self, const Tensor& exponent);
// Each element limited to [min, max]; either bound may be None, not both.
// aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min = std::nullopt,
             const std::optional<Scalar>& max = std::nullopt);

// ---- ops/native/max_ops.yaml ----
// aten::max(Tensor self) -> Tensor
Tensor max(const Tensor& self);
// aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);

// ---- ops/native/pad_ops.yaml ----
// self padded with `value`: pad holds (before, after) pairs, the last dimension's first; a negative
// amount crops. constant_pad_nd(x, {1, 2}) adds one column before and two after.
// aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);

// ---- ops/native/pointwise_ops.yaml ----
// aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
// aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
// aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
// aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
const Tensor& sub_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
// aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
Tensor mul(const Tensor& self, const Tensor& other);
// aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
const Tensor& mul_(const Tensor& self, const Tensor& other);
// aten::mul.Scalar(Tensor self, Scalar other) -> Tensor
Tensor mul(const Tensor& self, const Scalar& other);
// self *= a C++ number, in place (what FunctionsManual's t.mul_(3. / N) dispatches).
// aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
const Tensor& mul_(const Tensor& self, const Scalar& other);
// aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
// self - alpha * a C++ number (what C++'s `t - 1` dispatches).
// aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
// aten::div.Tensor(Tensor self, Tensor other) -> Tensor
Tensor div(const Tensor& self, const Tensor& other);
// aten::div.Scalar(Tensor self, Scalar other) -> Tensor
Tensor div(const Tensor& self, const Scalar& other);
// aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
const Tensor& div_(const Tensor& self, const Scalar& other);
// aten::neg(Tensor self) -> Tensor
Tensor neg(const Tensor& self);
// aten::exp(Tensor self) -> Tensor
Tensor exp(const Tensor& self);
// aten::reciprocal(Tensor self) -> Tensor
Tensor reciprocal(const Tensor& self);
// aten::relu(Tensor self) -> Tensor
Tensor relu(const Tensor& self);
// aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);

// ---- ops/native/random_ops.yaml ----
// aten::normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)
const Tensor& normal_(const Tensor& self, double mean = 0, double std = 1, const Generator* generator = nullptr);
// Each element of self becomes 1 with probability p, else 0 (the default generator unless one is
// given; ops/native/distributions.h).
// aten::bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
const Tensor& bernoulli_(const Tensor& self, double p = 0.5, const Generator* generator = nullptr);
// aten::uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)
const Tensor& uniform_(const Tensor& self, double from = 0, double to = 1, const Generator* generator = nullptr);
// Each element of self becomes a draw from the exponential distribution of rate lambd, as PyTorch's
// CPU kernel draws it (Note [exponential_ draws one uniform double per element]).
// aten::exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)
const Tensor& exponential_(const Tensor& self, double lambd = 1, const Generator* generator = nullptr);
// num_samples int64 indices per row of self (1-D or 2-D, non-negative weights, not necessarily
// normalised), drawn with or without replacement (Note [multinomial's two paths]).
// aten::multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor
Tensor multinomial(const Tensor& self, std::int64_t num_samples, bool replacement = false,
                   const Generator* generator = nullptr);

// ---- ops/native/reduction_ops.yaml ----
// aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
// aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);

// ---- ops/native/scan_ops.yaml ----
// The running sum of self along `dim`, in `dtype` when given (integer and bool inputs give int64):
// Note [cumsum promotes, then accumulates wide].
// aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
Tensor cumsum(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// self with its elements in reverse order along each of `dims`.
// aten::flip(Tensor self, int[] dims) -> Tensor
Tensor flip(const Tensor& self, IntArrayRef dims);

// ---- ops/native/scatter_ops.yaml ----
// self's elements at `index` along dim.
// aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index, bool sparse_grad = false);
// A copy of self with src written at `index` along dim.
// aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
// A copy of self with value written at `index` along dim.
// aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Scalar& value);
// A copy of self with src added at `index` along dim.
// aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);

// ---- ops/native/softmax_ops.yaml ----
// aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  ScalarType input_dtype);
// aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                              ScalarType input_dtype);

// ---- ops/native/vector_ops.yaml ----
// The inner product of two 1-D tensors of the same length and dtype: a 0-d tensor.
// aten::dot(Tensor self, Tensor tensor) -> Tensor
Tensor dot(const Tensor& self, const Tensor& tensor);
// A matrix [n, m] times a vector [m]: a vector [n].
// aten::mv(Tensor self, Tensor vec) -> Tensor
Tensor mv(const Tensor& self, const Tensor& vec);

// ---- ops/native/view_ops.yaml ----
// aten::t(Tensor(a) self) -> Tensor(a)
Tensor t(const Tensor& self);
// aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1);
// self's dimensions reordered: dimension i of the view is dimension dims[i] of self (each once;
// negative dims wrap).
// aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
Tensor permute(const Tensor& self, IntArrayRef dims);
// aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
Tensor view(const Tensor& self, IntArrayRef size);
// A view of a tensor nothing else aliases (a fresh result: matmul's N-D output, reshape's copy),
// under a schema that declares no alias: autograd records it as a plain op (UnsafeViewBackward0),
// never as a differentiable view.
// aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor
Tensor _unsafe_view(const Tensor& self, IntArrayRef size);
// aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
Tensor expand(const Tensor& self, IntArrayRef size, bool implicit = false);
// aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<std::int64_t> storage_offset = std::nullopt);
// aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
Tensor unsqueeze(const Tensor& self, std::int64_t dim);
// aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
Tensor squeeze(const Tensor& self, std::int64_t dim);
// self's slice at `index` of dimension `dim`, which it drops (x[1], x[:, -1]); negative dim and
// index wrap.
// aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index);
// Python's x[start:end:step] along `dim`: start and end wrap once and are clamped to the size;
// step > 0.
// aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
Tensor slice(const Tensor& self, std::int64_t dim = 0, std::optional<std::int64_t> start = std::nullopt,
             std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1);
// The gradient of select: zeros of `input_sizes` with `grad_output` in the selected part.
// aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor
Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t index);
// The gradient of slice: zeros of `input_sizes` with `grad_output` in the sliced part.
// aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end,
//   SymInt step) -> Tensor
Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t start,
                      std::int64_t end, std::int64_t step);
// The diagonal of the matrices that dimensions dim1 and dim2 make, shifted by offset (above the main
// diagonal when positive, below it when negative), as the view's last dimension; dim1 and dim2 are
// dropped. einsum takes it for a subscript repeated in one operand ("ii->i").
// aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
Tensor diagonal(const Tensor& self, std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1);
// The gradient of diagonal: zeros of `input_sizes` with `grad_output` on the diagonal.
// aten::diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor
Tensor diagonal_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t offset, std::int64_t dim1,
                         std::int64_t dim2);

}  // namespace strata
