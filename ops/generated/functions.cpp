// ops/generated/functions.cpp: written by scripts/gen-ops from the op rows of ops/native/ (Note [A row
// holds its op's facts], ops/boxing.h); do not edit.
#include "ops/generated/functions.h"

#include "ops/torch_function.h"
#include "ops/typed_operator.h"

namespace strata {

// ---- ops/native/activation_ops.cpp ----

Tensor sigmoid(const Tensor& self) {
  STRATA_TORCH_FUNCTION(sigmoid, "torch.sigmoid", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::sigmoid");
  return op(self);
}

Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::sigmoid_backward");
  return op(grad_output, output);
}

Tensor silu(const Tensor& self) {
  STRATA_TORCH_FUNCTION(silu, "torch.nn.functional.silu", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::silu");
  return op(self);
}

Tensor silu_backward(const Tensor& grad_output, const Tensor& self) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::silu_backward");
  return op(grad_output, self);
}

Tensor tanh(const Tensor& self) {
  STRATA_TORCH_FUNCTION(tanh, "torch.tanh", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::tanh");
  return op(self);
}

Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::tanh_backward");
  return op(grad_output, output);
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  STRATA_TORCH_FUNCTION(gelu, "torch._C._nn.gelu", "input, approximate", self, approximate);
  static const TypedOperator<Tensor(const Tensor&, std::string_view)> op("aten::gelu");
  return op(self, approximate);
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::string_view)> op("aten::gelu_backward");
  return op(grad_output, self, approximate);
}

// ---- ops/native/compare_ops.cpp ----

Tensor eq(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(eq, "torch.eq", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::eq", "Tensor");
  return op(self, other);
}

Tensor isnan(const Tensor& self) {
  STRATA_TORCH_FUNCTION(isnan, "torch.isnan", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::isnan");
  return op(self);
}

Tensor logical_and(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(logical_and, "torch.logical_and", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::logical_and");
  return op(self, other);
}

const Tensor& logical_or_(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(logical_or_, "torch.Tensor.logical_or_", "self, other", self, other);
  static const TypedOperator<void(const Tensor&, const Tensor&)> op("aten::logical_or_");
  op(self, other);
  return self;
}

// ---- ops/native/dropout_ops.cpp ----

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, double)> op("aten::native_dropout_backward");
  return op(grad_output, mask, scale);
}

// ---- ops/native/embedding_ops.cpp ----

Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  STRATA_TORCH_FUNCTION(embedding, "torch.embedding", "weight, indices, padding_idx, scale_grad_by_freq, sparse",
                        weight, indices, padding_idx, scale_grad_by_freq, sparse);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, bool, bool)> op("aten::embedding");
  return op(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, std::int64_t num_weights,
                                std::int64_t padding_idx, bool scale_grad_by_freq) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, std::int64_t,
                                    bool)> op("aten::embedding_dense_backward");
  return op(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// ---- ops/native/factory_ops.cpp ----

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  STRATA_TORCH_FUNCTION(clone, "torch.clone", "input, *, memory_format", self, memory_format);
  static const TypedOperator<Tensor(const Tensor&, std::optional<MemoryFormat>)> op("aten::clone");
  return op(self, memory_format);
}

const Tensor& fill_(const Tensor& self, const Scalar& value) {
  STRATA_TORCH_FUNCTION(fill_, "torch.Tensor.fill_", "self, value", self, value);
  static const TypedOperator<void(const Tensor&, Scalar)> op("aten::fill_", "Scalar");
  op(self, value);
  return self;
}

const Tensor& zero_(const Tensor& self) {
  STRATA_TORCH_FUNCTION(zero_, "torch.Tensor.zero_", "self", self);
  static const TypedOperator<void(const Tensor&)> op("aten::zero_");
  op(self);
  return self;
}

const Tensor& copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  STRATA_TORCH_FUNCTION(copy_, "torch.Tensor.copy_", "self, src, non_blocking", self, src, non_blocking);
  static const TypedOperator<void(const Tensor&, const Tensor&, bool)> op("aten::copy_");
  op(self, src, non_blocking);
  return self;
}

// ---- ops/native/join_ops.cpp ----

Tensor cat(TensorList tensors, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(cat, "torch.cat", "tensors, dim", tensors, dim);
  static const TypedOperator<Tensor(TensorList, std::int64_t)> op("aten::cat");
  return op(tensors, dim);
}

Tensor stack(TensorList tensors, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(stack, "torch.stack", "tensors, dim", tensors, dim);
  static const TypedOperator<Tensor(TensorList, std::int64_t)> op("aten::stack");
  return op(tensors, dim);
}

// ---- ops/native/linalg_ops.cpp ----

Tensor mm(const Tensor& self, const Tensor& mat2) {
  STRATA_TORCH_FUNCTION(mm, "torch.mm", "input, mat2", self, mat2);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::mm");
  return op(self, mat2);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(addmm, "torch.addmm", "input, mat1, mat2, *, beta, alpha", self, mat1, mat2, beta, alpha);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, Scalar, Scalar)> op("aten::addmm");
  return op(self, mat1, mat2, beta, alpha);
}

Tensor _scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                  const Tensor& bias, const Tensor& scale_result, std::optional<ScalarType> out_dtype,
                  bool use_fast_accum) {
  STRATA_TORCH_FUNCTION(_scaled_mm, "torch._scaled_mm",
                        "input, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum", self, mat2,
                        scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                    const Tensor&, std::optional<ScalarType>, bool)> op("aten::_scaled_mm");
  return op(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum);
}

// ---- ops/native/loss_ops.cpp ----

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         std::int64_t reduction, std::int64_t ignore_index, const Tensor& total_weight) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, std::int64_t,
                                    std::int64_t, const Tensor&)> op("aten::nll_loss_backward");
  return op(grad_output, self, target, weight, reduction, ignore_index, total_weight);
}

// ---- ops/native/max_ops.cpp ----

Tensor max(const Tensor& self) {
  STRATA_TORCH_FUNCTION(max, "torch.max", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::max");
  return op(self);
}

Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  STRATA_TORCH_FUNCTION(argmax, "torch.argmax", "input, dim, keepdim", self, dim, keepdim);
  static const TypedOperator<Tensor(const Tensor&, std::optional<std::int64_t>, bool)> op("aten::argmax");
  return op(self, dim, keepdim);
}

// ---- ops/native/pointwise_ops.cpp ----

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(add, "torch.add", "input, other, *, alpha", self, other, alpha);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, Scalar)> op("aten::add", "Tensor");
  return op(self, other, alpha);
}

const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(add_, "torch.Tensor.add_", "self, other, *, alpha", self, other, alpha);
  static const TypedOperator<void(const Tensor&, const Tensor&, Scalar)> op("aten::add_", "Tensor");
  op(self, other, alpha);
  return self;
}

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(sub, "torch.sub", "input, other, *, alpha", self, other, alpha);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, Scalar)> op("aten::sub", "Tensor");
  return op(self, other, alpha);
}

const Tensor& sub_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(sub_, "torch.Tensor.sub_", "self, other, *, alpha", self, other, alpha);
  static const TypedOperator<void(const Tensor&, const Tensor&, Scalar)> op("aten::sub_", "Tensor");
  op(self, other, alpha);
  return self;
}

Tensor mul(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(mul, "torch.mul", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::mul", "Tensor");
  return op(self, other);
}

const Tensor& mul_(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(mul_, "torch.Tensor.mul_", "self, other", self, other);
  static const TypedOperator<void(const Tensor&, const Tensor&)> op("aten::mul_", "Tensor");
  op(self, other);
  return self;
}

Tensor mul(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(mul, "torch.mul", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, Scalar)> op("aten::mul", "Scalar");
  return op(self, other);
}

Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(add, "torch.add", "input, other, *, alpha", self, other, alpha);
  static const TypedOperator<Tensor(const Tensor&, Scalar, Scalar)> op("aten::add", "Scalar");
  return op(self, other, alpha);
}

Tensor div(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(div, "torch.div", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> op("aten::div", "Tensor");
  return op(self, other);
}

Tensor div(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(div, "torch.div", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, Scalar)> op("aten::div", "Scalar");
  return op(self, other);
}

const Tensor& div_(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(div_, "torch.Tensor.div_", "self, other", self, other);
  static const TypedOperator<void(const Tensor&, Scalar)> op("aten::div_", "Scalar");
  op(self, other);
  return self;
}

Tensor neg(const Tensor& self) {
  STRATA_TORCH_FUNCTION(neg, "torch.neg", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::neg");
  return op(self);
}

Tensor exp(const Tensor& self) {
  STRATA_TORCH_FUNCTION(exp, "torch.exp", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::exp");
  return op(self);
}

Tensor reciprocal(const Tensor& self) {
  STRATA_TORCH_FUNCTION(reciprocal, "torch.reciprocal", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::reciprocal");
  return op(self);
}

Tensor relu(const Tensor& self) {
  STRATA_TORCH_FUNCTION(relu, "torch.relu", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::relu");
  return op(self);
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, Scalar)> op("aten::threshold_backward");
  return op(grad_output, self, threshold);
}

// ---- ops/native/random_ops.cpp ----

const Tensor& normal_(const Tensor& self, double mean, double std, const Generator* generator) {
  STRATA_TORCH_FUNCTION(normal_, "torch.Tensor.normal_", "self, mean, std, *, generator", self, mean, std, generator);
  static const TypedOperator<void(const Tensor&, double, double, GeneratorImpl*)> op("aten::normal_");
  op(self, mean, std, generator_of(generator));
  return self;
}

const Tensor& bernoulli_(const Tensor& self, double p, const Generator* generator) {
  STRATA_TORCH_FUNCTION(bernoulli_, "torch.Tensor.bernoulli_", "self, p, *, generator", self, p, generator);
  static const TypedOperator<void(const Tensor&, double, GeneratorImpl*)> op("aten::bernoulli_", "float");
  op(self, p, generator_of(generator));
  return self;
}

const Tensor& uniform_(const Tensor& self, double from, double to, const Generator* generator) {
  STRATA_TORCH_FUNCTION(uniform_, "torch.Tensor.uniform_", "self, from, to, *, generator", self, from, to, generator);
  static const TypedOperator<void(const Tensor&, double, double, GeneratorImpl*)> op("aten::uniform_");
  op(self, from, to, generator_of(generator));
  return self;
}

// ---- ops/native/reduction_ops.cpp ----

Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(sum, "torch.sum", "input, dim, keepdim, *, dtype", self, dim, keepdim, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<IntArrayRef>, bool,
                                    std::optional<ScalarType>)> op("aten::sum", "dim_IntList");
  return op(self, dim, keepdim, dtype);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(sum, "torch.sum", "input, *, dtype", self, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<ScalarType>)> op("aten::sum");
  return op(self, dtype);
}

Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(mean, "torch.mean", "input, dim, keepdim, *, dtype", self, dim, keepdim, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<IntArrayRef>, bool,
                                    std::optional<ScalarType>)> op("aten::mean", "dim");
  return op(self, dim, keepdim, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(mean, "torch.mean", "input, *, dtype", self, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<ScalarType>)> op("aten::mean");
  return op(self, dtype);
}

// ---- ops/native/scatter_ops.cpp ----

Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index, bool sparse_grad) {
  STRATA_TORCH_FUNCTION(gather, "torch.gather", "input, dim, index, *, sparse_grad", self, dim, index, sparse_grad);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, bool)> op("aten::gather");
  return op(self, dim, index, sparse_grad);
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  STRATA_TORCH_FUNCTION(scatter, "torch.scatter", "input, dim, index, src", self, dim, index, src);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, const Tensor&)> op("aten::scatter",
                                    "src");
  return op(self, dim, index, src);
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Scalar& value) {
  STRATA_TORCH_FUNCTION(scatter, "torch.scatter", "input, dim, index, value", self, dim, index, value);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, Scalar)> op("aten::scatter", "value");
  return op(self, dim, index, value);
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  STRATA_TORCH_FUNCTION(scatter_add, "torch.scatter_add", "input, dim, index, src", self, dim, index, src);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, const Tensor&)> op("aten::scatter_add");
  return op(self, dim, index, src);
}

// ---- ops/native/softmax_ops.cpp ----

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  ScalarType input_dtype) {
  STRATA_TORCH_FUNCTION(_log_softmax_backward_data, "torch._log_softmax_backward_data",
                        "grad_output, output, dim, input_dtype", grad_output, output, dim, input_dtype);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t,
                                    ScalarType)> op("aten::_log_softmax_backward_data");
  return op(grad_output, output, dim, input_dtype);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                              ScalarType input_dtype) {
  STRATA_TORCH_FUNCTION(_softmax_backward_data, "torch._softmax_backward_data", "grad_output, output, dim, input_dtype",
                        grad_output, output, dim, input_dtype);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t,
                                    ScalarType)> op("aten::_softmax_backward_data");
  return op(grad_output, output, dim, input_dtype);
}

// ---- ops/native/view_ops.cpp ----

Tensor t(const Tensor& self) {
  STRATA_TORCH_FUNCTION(t, "torch.t", "input", self);
  static const TypedOperator<Tensor(const Tensor&)> op("aten::t");
  return op(self);
}

Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1) {
  STRATA_TORCH_FUNCTION(transpose, "torch.transpose", "input, dim0, dim1", self, dim0, dim1);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, std::int64_t)> op("aten::transpose", "int");
  return op(self, dim0, dim1);
}

Tensor view(const Tensor& self, IntArrayRef size) {
  STRATA_TORCH_FUNCTION(view, "torch.Tensor.view", "self, size", self, size);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef)> op("aten::view");
  return op(self, size);
}

Tensor _unsafe_view(const Tensor& self, IntArrayRef size) {
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef)> op("aten::_unsafe_view");
  return op(self, size);
}

Tensor expand(const Tensor& self, IntArrayRef size, bool implicit) {
  STRATA_TORCH_FUNCTION(expand, "torch.Tensor.expand", "self, size, *, implicit", self, size, implicit);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, bool)> op("aten::expand");
  return op(self, size, implicit);
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<std::int64_t> storage_offset) {
  STRATA_TORCH_FUNCTION(as_strided, "torch.as_strided", "input, size, stride, storage_offset", self, size, stride,
                        storage_offset);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, IntArrayRef,
                                    std::optional<std::int64_t>)> op("aten::as_strided");
  return op(self, size, stride, storage_offset);
}

Tensor unsqueeze(const Tensor& self, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(unsqueeze, "torch.unsqueeze", "input, dim", self, dim);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t)> op("aten::unsqueeze");
  return op(self, dim);
}

Tensor squeeze(const Tensor& self, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(squeeze, "torch.squeeze", "input, dim", self, dim);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t)> op("aten::squeeze", "dim");
  return op(self, dim);
}

Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index) {
  STRATA_TORCH_FUNCTION(select, "torch.select", "input, dim, index", self, dim, index);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, std::int64_t)> op("aten::select", "int");
  return op(self, dim, index);
}

Tensor slice(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
             std::int64_t step) {
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, std::optional<std::int64_t>,
                                    std::optional<std::int64_t>, std::int64_t)> op("aten::slice", "Tensor");
  return op(self, dim, start, end, step);
}

Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t index) {
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, std::int64_t,
                                    std::int64_t)> op("aten::select_backward");
  return op(grad_output, input_sizes, dim, index);
}

Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t start,
                      std::int64_t end, std::int64_t step) {
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, std::int64_t, std::int64_t, std::int64_t,
                                    std::int64_t)> op("aten::slice_backward");
  return op(grad_output, input_sizes, dim, start, end, step);
}

}  // namespace strata
