// ops/functions.cpp: front-end functions. Each resolves its op handle once and calls it.
#include "ops/functions.h"

#include "ops/op_table.h"

namespace strata {

using detail::call_op;

namespace {
IValue generator_value(const Generator* g) { return g ? IValue(g->impl_ptr()) : IValue(); }
}  // namespace

Tensor t(const Tensor& self) {
  static const OperatorHandle op = ops::op("aten::t");
  return call_op(op, self);
}

Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1) {
  static const OperatorHandle op = ops::op("aten::transpose", "int");
  return call_op(op, self, dim0, dim1);
}

Tensor view(const Tensor& self, IntArrayRef size) {
  static const OperatorHandle op = ops::op("aten::view");
  return call_op(op, self, size);
}

Tensor expand(const Tensor& self, IntArrayRef size, bool implicit) {
  static const OperatorHandle op = ops::op("aten::expand");
  return call_op(op, self, size, implicit);
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<std::int64_t> storage_offset) {
  static const OperatorHandle op = ops::op("aten::as_strided");
  return call_op(op, self, size, stride, storage_offset);
}

Tensor unsqueeze(const Tensor& self, std::int64_t dim) {
  static const OperatorHandle op = ops::op("aten::unsqueeze");
  return call_op(op, self, dim);
}

Tensor squeeze(const Tensor& self, std::int64_t dim) {
  static const OperatorHandle op = ops::op("aten::squeeze", "dim");
  return call_op(op, self, dim);
}

Tensor sum_to(const Tensor& self, IntArrayRef shape) {
  if (shape.empty()) return sum(self);
  const IntArrayRef sizes = self.sizes();
  const std::size_t leading = sizes.size() - shape.size();
  DimVector reduce;
  for (std::size_t i = 0; i < leading; ++i) reduce.push_back(static_cast<std::int64_t>(i));
  for (std::size_t i = leading; i < sizes.size(); ++i)
    if (shape[i - leading] == 1 && sizes[i] != 1) reduce.push_back(static_cast<std::int64_t>(i));
  Tensor out = reduce.empty() ? self : sum(self, reduce, /*keepdim=*/true);
  return leading > 0 ? view(out, shape) : out;
}

Tensor to(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  static const OperatorHandle op = ops::op("aten::_to_copy");
  return call_op(op, self, dtype, IValue(), IValue(), IValue(), false, IValue());
}

Tensor contiguous(const Tensor& self) { return self.is_contiguous() ? self : clone(self, MemoryFormat::Contiguous); }

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  const DimVector sizes = infer_size(shape, self.numel());
  if (view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  return view(clone(self, MemoryFormat::Contiguous), sizes);
}

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  static const OperatorHandle op = ops::op("aten::add", "Tensor");
  return call_op(op, self, other, alpha);
}

const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  static const OperatorHandle op = ops::op("aten::add_", "Tensor");
  call_op(op, self, other, alpha);
  return self;
}

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  static const OperatorHandle op = ops::op("aten::sub", "Tensor");
  return call_op(op, self, other, alpha);
}

Tensor mul(const Tensor& self, const Tensor& other) {
  static const OperatorHandle op = ops::op("aten::mul", "Tensor");
  return call_op(op, self, other);
}

const Tensor& mul_(const Tensor& self, const Tensor& other) {
  static const OperatorHandle op = ops::op("aten::mul_", "Tensor");
  call_op(op, self, other);
  return self;
}

Tensor div(const Tensor& self, const Tensor& other) {
  static const OperatorHandle op = ops::op("aten::div", "Tensor");
  return call_op(op, self, other);
}

Tensor neg(const Tensor& self) {
  static const OperatorHandle op = ops::op("aten::neg");
  return call_op(op, self);
}

Tensor relu(const Tensor& self) {
  static const OperatorHandle op = ops::op("aten::relu");
  return call_op(op, self);
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  static const OperatorHandle op = ops::op("aten::threshold_backward");
  return call_op(op, grad_output, self, threshold);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

Tensor mm(const Tensor& self, const Tensor& mat2) {
  static const OperatorHandle op = ops::op("aten::mm");
  return call_op(op, self, mat2);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  static const OperatorHandle op = ops::op("aten::addmm");
  return call_op(op, self, mat1, mat2, beta, alpha);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  static const OperatorHandle op = ops::op("aten::sum");
  return call_op(op, self, dtype);
}

Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  static const OperatorHandle op = ops::op("aten::sum", "dim_IntList");
  return call_op(op, self, dim, keepdim, dtype);
}

Tensor _log_softmax(const Tensor& self, std::int64_t dim, bool half_to_float) {
  static const OperatorHandle op = ops::op("aten::_log_softmax");
  return call_op(op, self, dim, half_to_float);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  ScalarType input_dtype) {
  static const OperatorHandle op = ops::op("aten::_log_softmax_backward_data");
  return call_op(op, grad_output, output, dim, input_dtype);
}

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const Tensor& weight,
                                            std::int64_t reduction, std::int64_t ignore_index) {
  static const OperatorHandle op = ops::op("aten::nll_loss_forward");
  Stack stack;
  stack.emplace_back(self);
  stack.emplace_back(target);
  stack.emplace_back(weight.defined() ? IValue(weight) : IValue());
  stack.emplace_back(reduction);
  stack.emplace_back(ignore_index);
  op.call(stack);
  Tensor total_weight = std::move(stack[1]).to_tensor();
  return {std::move(stack[0]).to_tensor(), std::move(total_weight)};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         std::int64_t reduction, std::int64_t ignore_index, const Tensor& total_weight) {
  static const OperatorHandle op = ops::op("aten::nll_loss_backward");
  return call_op(op, grad_output, self, target, weight.defined() ? IValue(weight) : IValue(), reduction, ignore_index,
                 total_weight);
}

Tensor empty(IntArrayRef size, const TensorOptions& options) {
  static const OperatorHandle op = ops::op("aten::empty", "memory_format");
  return call_op(op, size, options.dtype, IValue(), options.device, IValue(), IValue());
}

namespace {
Tensor like(const OperatorHandle& op, const Tensor& self, const TensorOptions& options) {
  return call_op(op, self, options.dtype, IValue(), options.device, IValue(), IValue());
}
}  // namespace

Tensor empty_like(const Tensor& self, const TensorOptions& options) {
  static const OperatorHandle op = ops::op("aten::empty_like");
  return like(op, self, options);
}

Tensor ones_like(const Tensor& self, const TensorOptions& options) {
  static const OperatorHandle op = ops::op("aten::ones_like");
  return like(op, self, options);
}

Tensor zeros_like(const Tensor& self, const TensorOptions& options) {
  static const OperatorHandle op = ops::op("aten::zeros_like");
  return like(op, self, options);
}

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  static const OperatorHandle op = ops::op("aten::new_empty_strided");
  return call_op(op, self, size, stride, options.dtype, IValue(), options.device, IValue());
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  static const OperatorHandle op = ops::op("aten::clone");
  return call_op(op, self, memory_format);
}

const Tensor& fill_(const Tensor& self, const Scalar& value) {
  static const OperatorHandle op = ops::op("aten::fill_", "Scalar");
  call_op(op, self, value);
  return self;
}

const Tensor& zero_(const Tensor& self) {
  static const OperatorHandle op = ops::op("aten::zero_");
  call_op(op, self);
  return self;
}

const Tensor& copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  static const OperatorHandle op = ops::op("aten::copy_");
  call_op(op, self, src, non_blocking);
  return self;
}

Tensor randn(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  if (generator) {
    static const OperatorHandle op = ops::op("aten::randn", "generator");
    return call_op(op, size, generator_value(generator), options.dtype, IValue(), options.device, IValue());
  }
  static const OperatorHandle op = ops::op("aten::randn");
  return call_op(op, size, options.dtype, IValue(), options.device, IValue());
}

Tensor rand(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  if (generator) {
    static const OperatorHandle op = ops::op("aten::rand", "generator");
    return call_op(op, size, generator_value(generator), options.dtype, IValue(), options.device, IValue());
  }
  static const OperatorHandle op = ops::op("aten::rand");
  return call_op(op, size, options.dtype, IValue(), options.device, IValue());
}

Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef size, const TensorOptions& options,
               const Generator* generator) {
  if (generator) {
    static const OperatorHandle op = ops::op("aten::randint", "low_generator");
    return call_op(op, low, high, size, generator_value(generator), options.dtype, IValue(), options.device, IValue());
  }
  static const OperatorHandle op = ops::op("aten::randint", "low");
  return call_op(op, low, high, size, options.dtype, IValue(), options.device, IValue());
}

const Tensor& normal_(const Tensor& self, double mean, double std, const Generator* generator) {
  static const OperatorHandle op = ops::op("aten::normal_");
  call_op(op, self, mean, std, generator_value(generator));
  return self;
}

const Tensor& uniform_(const Tensor& self, double from, double to, const Generator* generator) {
  static const OperatorHandle op = ops::op("aten::uniform_");
  call_op(op, self, from, to, generator_value(generator));
  return self;
}

}  // namespace strata
