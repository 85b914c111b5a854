// ops/functions.cpp: the front-end functions written by hand for ops (ops/functions.h says which and
// why); the rest are generated from the op rows at build time. Each TypedOperator's signature is its
// op's schema in C++ (the parameter list of the op's meta function in ops/native/).
#include "ops/functions.h"

#include "ops/torch_function.h"
#include "ops/native/type_promotion.h"

namespace strata {

namespace {
// Calls a boxed op with two tensor outputs (max.dim, native_dropout).
template <typename... Args>
std::tuple<Tensor, Tensor> call_two_outputs(const OperatorHandle& op, const Args&... args) {
  Stack stack;
  (detail::push_argument(stack, args), ...);
  op.call(stack);
  Tensor second = std::move(stack[1]).to_tensor();
  return {std::move(stack[0]).to_tensor(), std::move(second)};
}
}  // namespace

Tensor _log_softmax(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_TORCH_FUNCTION(_log_softmax, "torch._log_softmax", "input, dim, half_to_float", self, dim, half_to_float);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, bool)> op("aten::_log_softmax");
  return op(self, dim, half_to_float);
}

Tensor _softmax(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_TORCH_FUNCTION(_softmax, "torch._softmax", "input, dim, half_to_float", self, dim, half_to_float);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, bool)> op("aten::_softmax");
  return op(self, dim, half_to_float);
}

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const Tensor& weight,
                                            std::int64_t reduction, std::int64_t ignore_index) {
  static const OperatorHandle op = ops::op("aten::nll_loss_forward");  // two outputs: boxed only
  Stack stack;
  detail::push_argument(stack, self);
  detail::push_argument(stack, target);
  if (weight.defined()) detail::push_argument(stack, weight);
  else stack.emplace_back();
  stack.emplace_back(reduction);
  stack.emplace_back(ignore_index);
  op.call(stack);
  Tensor total_weight = std::move(stack[1]).to_tensor();
  return {std::move(stack[0]).to_tensor(), std::move(total_weight)};
}

std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim) {
  STRATA_TORCH_FUNCTION(max, "torch.max", "input, dim, keepdim", self, dim, keepdim);
  static const OperatorHandle op = ops::op("aten::max", "dim");  // two outputs: boxed only
  return call_two_outputs(op, self, dim, keepdim);
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, std::int64_t dim, bool descending) {
  STRATA_TORCH_FUNCTION(sort, "torch.sort", "input, dim, descending", self, dim, descending);
  static const OperatorHandle op = ops::op("aten::sort");  // two outputs: boxed only
  return call_two_outputs(op, self, dim, descending);
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  STRATA_TORCH_FUNCTION(topk, "torch.topk", "input, k, dim, largest, sorted", self, k, dim, largest, sorted);
  static const OperatorHandle op = ops::op("aten::topk");  // two outputs: boxed only
  return call_two_outputs(op, self, k, dim, largest, sorted);
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  STRATA_TORCH_FUNCTION(native_dropout, "torch.native_dropout", "input, p, train", input, p, train);
  static const OperatorHandle op = ops::op("aten::native_dropout");  // two outputs: boxed only
  return call_two_outputs(op, input, p, train ? IValue(*train) : IValue());
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                                                     const Tensor& bias, double eps) {
  STRATA_TORCH_FUNCTION(native_layer_norm, "torch.native_layer_norm", "input, normalized_shape, weight, bias, eps", input,
                        normalized_shape, weight, bias, eps);
  static const OperatorHandle op = ops::op("aten::native_layer_norm");  // three outputs: boxed only
  Stack stack;
  detail::push_argument(stack, input);
  detail::push_argument(stack, IValue(normalized_shape));
  detail::push_argument(stack, weight);
  detail::push_argument(stack, bias);
  detail::push_argument(stack, eps);
  op.call(stack);
  return {std::move(stack[0]).to_tensor(), std::move(stack[1]).to_tensor(), std::move(stack[2]).to_tensor()};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                                              std::array<bool, 3> output_mask) {
  static const OperatorHandle op = ops::op("aten::native_layer_norm_backward");  // three outputs: boxed only
  Stack stack;
  for (const Tensor* t : {&grad_out, &input}) detail::push_argument(stack, *t);
  detail::push_argument(stack, IValue(normalized_shape));
  for (const Tensor* t : {&mean, &rstd, &weight, &bias}) detail::push_argument(stack, *t);
  // Note [A bool[3] argument is boxed as ints] (ops/native/norm_ops.cpp)
  const std::array<std::int64_t, 3> mask{output_mask[0], output_mask[1], output_mask[2]};
  detail::push_argument(stack, IValue(IntArrayRef(mask)));
  op.call(stack);
  return {std::move(stack[0]).to_tensor(), std::move(stack[1]).to_tensor(), std::move(stack[2]).to_tensor()};
}

Tensor to(const Tensor& self, ScalarType dtype) {
  STRATA_TORCH_FUNCTION(to, "torch.Tensor.to", "self, dtype", self, dtype);
  detail::check_defined(self, "aten::to", 0, "self");
  if (self.dtype() == dtype) return self;
  static const TypedOperator<Tensor(const Tensor&, std::optional<ScalarType>, std::optional<Layout>,
                                    std::optional<Device>, std::optional<bool>, bool, std::optional<MemoryFormat>)>
      op("aten::_to_copy");
  return op(self, dtype, std::nullopt, std::nullopt, std::nullopt, false, std::nullopt);
}

// The operators announce the Tensor method PyTorch's operator calls (`x + y` is torch.Tensor.add,
// `z -= y` torch.Tensor.sub_, Note [A method is announced as the method]); a number first is
// Python's reflected operator: `1 + x` and `2 * x` are add and mul of (x, 1), `1 - x` and `2 / x`
// the torch._tensor functions __rsub__ and __rtruediv__ of (x, 1).
Tensor operator+(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator+, "torch.Tensor.add", "self, other", a, b);
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator-, "torch.Tensor.sub", "self, other", a, b);
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator*, "torch.Tensor.mul", "self, other", a, b);
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator/, "torch.Tensor.div", "self, other", a, b);
  return div(a, b);
}
Tensor operator+(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator+, "torch.Tensor.add", "self, other", a, b);
  return add(a, b);
}
Tensor operator+(const Scalar& a, const Tensor& b) { return b + a; }
Tensor operator-(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator-, "torch.Tensor.sub", "self, other", a, b);
  return sub(a, ops::wrapped_scalar_tensor(b));
}
namespace {
Tensor rsub(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(rsub, "torch.Tensor.__rsub__", "self, other", self, other);
  return sub(ops::wrapped_scalar_tensor(other), self);
}
Tensor rdiv(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(rdiv, "torch.Tensor.__rtruediv__", "self, other", self, other);
  return div(ops::wrapped_scalar_tensor(other), self);
}
}  // namespace
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator*, "torch.Tensor.mul", "self, other", a, b);
  return mul(a, b);
}
Tensor operator*(const Scalar& a, const Tensor& b) { return b * a; }
Tensor operator/(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator/, "torch.Tensor.div", "self, other", a, b);
  return div(a, ops::wrapped_scalar_tensor(b));
}
Tensor operator/(const Scalar& a, const Tensor& b) { return rdiv(b, a); }
const Tensor& operator+=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator+=, "torch.Tensor.add_", "self, other", a, b);
  return add_(a, b);
}
const Tensor& operator+=(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator+=, "torch.Tensor.add_", "self, other", a, b);
  return add_(a, ops::wrapped_scalar_tensor(b));
}
const Tensor& operator-=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator-=, "torch.Tensor.sub_", "self, other", a, b);
  return sub_(a, b);
}
const Tensor& operator-=(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator-=, "torch.Tensor.sub_", "self, other", a, b);
  return sub_(a, ops::wrapped_scalar_tensor(b));
}
const Tensor& operator*=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator*=, "torch.Tensor.mul_", "self, other", a, b);
  return mul_(a, b);
}
const Tensor& operator*=(const Tensor& a, const Scalar& b) {
  STRATA_TORCH_FUNCTION(operator*=, "torch.Tensor.mul_", "self, other", a, b);
  return mul_(a, ops::wrapped_scalar_tensor(b));
}

Tensor operator-(const Tensor& a) {
  STRATA_TORCH_FUNCTION(operator-, "torch.Tensor.neg", "self", a);
  return neg(a);
}

}  // namespace strata
