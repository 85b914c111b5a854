// ops/functions.cpp: front-end functions. Each TypedOperator's signature is its op's schema in C++
// (the parameter list of the op's meta, geometry or check function in ops/*_ops.cpp).
#include "ops/functions.h"

#include "ops/detach.h"
#include "ops/torch_function.h"
#include "ops/native/type_promotion.h"

namespace strata {

namespace {
using OptDtype = std::optional<ScalarType>;
using OptLayout = std::optional<Layout>;
using OptDevice = std::optional<Device>;
using OptBool = std::optional<bool>;
using OptFormat = std::optional<MemoryFormat>;
using ViewOf1 = TypedOperator<Tensor(const Tensor&)>;
using Unary = TypedOperator<Tensor(const Tensor&)>;
using Binary = TypedOperator<Tensor(const Tensor&, const Tensor&)>;
using BinaryAlpha = TypedOperator<Tensor(const Tensor&, const Tensor&, Scalar)>;
using Like = TypedOperator<Tensor(const Tensor&, OptDtype, OptLayout, OptDevice, OptBool, OptFormat)>;
using Factory = TypedOperator<Tensor(IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)>;
using GeneratorFactory = TypedOperator<Tensor(IntArrayRef, GeneratorImpl*, OptDtype, OptLayout, OptDevice, OptBool)>;
using RandomFill = TypedOperator<void(const Tensor&, double, double, GeneratorImpl*)>;

GeneratorImpl* generator_of(const Generator* g) { return g ? g->impl() : nullptr; }

// Note [Factories return through make_variable]
// PyTorch's factory functions (torch::ones_like, torch::empty, torch::randn...) hand the kernel's
// result to make_variable, which keeps it when nothing else references it (its TensorImpl and its
// version counter are unique) and otherwise returns a shallow copy (shallow_copy_and_detach). A fresh
// result is referenced elsewhere only when a dispatch mode or subclass kept it, and then the copy
// dispatches aten::detach: a mode that keeps its outputs sees [ones_like, detach], one that keeps
// nothing sees [ones_like]. backward()'s implicit ones_like is such a call. Ops a handler calls
// through op.call are not factory functions (PyTorch's torch.ops.aten.* skip make_variable).
Tensor make_variable(Tensor t) {
  const TensorImpl* impl = t.impl();
  if (t.defined() && (impl->use_count() > 1 || impl->storage().use_count() > 1)) [[unlikely]] return shallow_copy_and_detach(t);
  return t;
}
}  // namespace

namespace detail {
void box_argument(std::vector<IValue>& out, const TensorOptions& options) {
  box_argument(out, options.dtype);
  box_argument(out, options.device);
}
}  // namespace detail

namespace {
// An error of a composite's own check or of a helper it calls, named after the aten op it mirrors.
template <typename Fn>
decltype(auto) named_after(const char* op, Fn&& fn) {
  try {
    return fn();
  } catch (Error& e) {
    if (e.op().empty()) e.set_op(op);
    throw;
  }
}
}  // namespace

// ---- views ----
Tensor t(const Tensor& self) {
  STRATA_TORCH_FUNCTION(t, "torch.t", "input", self);
  static const ViewOf1 op("aten::t");
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

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<std::int64_t> storage_offset) {
  STRATA_TORCH_FUNCTION(as_strided, "torch.as_strided", "input, size, stride, storage_offset", self, size, stride,
                        storage_offset);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, IntArrayRef, std::optional<std::int64_t>)> op("aten::as_strided");
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
  // torch.ops.aten.slice: Python reaches it through indexing, which is no torch function.
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, std::optional<std::int64_t>, std::optional<std::int64_t>,
                                    std::int64_t)>
      op("aten::slice", "Tensor");
  return op(self, dim, start, end, step);
}

Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t index) {
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, std::int64_t, std::int64_t)> op("aten::select_backward");
  return op(grad_output, input_sizes, dim, index);
}

Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t start,
                      std::int64_t end, std::int64_t step) {
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, std::int64_t, std::int64_t, std::int64_t, std::int64_t)> op(
      "aten::slice_backward");
  return op(grad_output, input_sizes, dim, start, end, step);
}

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

// ---- composites ----
// Note [Composites check for undefined arguments]
// A dispatched op refuses an undefined Tensor() where its schema wants a Tensor (Note [Boxed calls
// are checked where keys are read]), but a composite never reaches the dispatcher and reads its
// arguments' metadata first, which a Tensor() does not have (Note [An undefined tensor answers or
// refuses]). So each composite checks its Tensor arguments itself, in the dispatcher's words, named
// after the aten composite it mirrors. Python cannot pass None there at all (a TypeError).
namespace detail {
void throw_undefined_argument(const char* op, int position, const char* name) {
  Error e(str_cat("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #", position, " '",
                  name, "'"));
  e.set_op(op);
  throw e;
}
void throw_not_expandable(const char* op, IntArrayRef size, IntArrayRef sizes) {
  Error e(str_cat("size {", shape_str(size), "} is not expandable to size {", shape_str(sizes), "}."));
  e.set_op(op);
  throw e;
}
}  // namespace detail


// PyTorch 2.8's narrow_symint: its checks, then a slice.
Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length) {
  STRATA_TORCH_FUNCTION(narrow, "torch.narrow", "input, dim, start, length", self, dim, start, length);
  detail::check_defined(self, "aten::narrow", 0, "self");
  named_after("aten::narrow", [&] {
    STRATA_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
    STRATA_CHECK(length >= 0, "narrow(): length must be non-negative.");
    const std::int64_t size = self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
    STRATA_CHECK(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ", size,
                 "], but got ", start, ")");
    if (start < 0) start += size;
    STRATA_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size, ").");
  });
  return slice(self, dim, start, start + length, 1);
}

Tensor sum_to(const Tensor& self, IntArrayRef shape) {
  detail::check_defined(self, "aten::sum_to", 0, "self");
  const IntArrayRef sizes = self.sizes();
  // sum_to_size's check: it also keeps `leading` below from wrapping when shape has more dimensions.
  if (!is_expandable_to(shape, sizes)) [[unlikely]] detail::throw_not_expandable("aten::sum_to", shape, sizes);
  if (shape.empty()) return sum(self);
  const std::size_t leading = sizes.size() - shape.size();
  DimVector reduce;
  for (std::size_t i = 0; i < leading; ++i) reduce.push_back(static_cast<std::int64_t>(i));
  for (std::size_t i = leading; i < sizes.size(); ++i)
    if (shape[i - leading] == 1 && sizes[i] != 1) reduce.push_back(static_cast<std::int64_t>(i));
  Tensor out = reduce.empty() ? self : sum(self, reduce, /*keepdim=*/true);
  return leading > 0 ? view(out, shape) : out;
}

Tensor to(const Tensor& self, ScalarType dtype) {
  STRATA_TORCH_FUNCTION(to, "torch.Tensor.to", "self, dtype", self, dtype);
  detail::check_defined(self, "aten::to", 0, "self");
  if (self.dtype() == dtype) return self;
  static const TypedOperator<Tensor(const Tensor&, OptDtype, OptLayout, OptDevice, OptBool, bool, OptFormat)> op(
      "aten::_to_copy");
  return op(self, dtype, std::nullopt, std::nullopt, std::nullopt, false, std::nullopt);
}

Tensor contiguous(const Tensor& self) {
  STRATA_TORCH_FUNCTION(contiguous, "torch.Tensor.contiguous", "self", self);
  detail::check_defined(self, "aten::contiguous", 0, "self");
  return self.is_contiguous() ? self : clone(self, MemoryFormat::Contiguous);
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  STRATA_TORCH_FUNCTION(reshape, "torch.reshape", "input, shape", self, shape);
  detail::check_defined(self, "aten::reshape", 0, "self");
  const DimVector sizes = infer_size(shape, self.numel());
  if (view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  return _unsafe_view(clone(self, MemoryFormat::Contiguous), sizes);  // PyTorch's reshape: the copy is nobody's view
}

// ---- arithmetic ----
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(add, "torch.add", "input, other, *, alpha", self, other, alpha);
  static const BinaryAlpha op("aten::add", "Tensor");
  return op(self, other, alpha);
}

Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(add, "torch.add", "input, other, *, alpha", self, other, alpha);
  static const TypedOperator<Tensor(const Tensor&, Scalar, Scalar)> op("aten::add", "Scalar");
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
  static const BinaryAlpha op("aten::sub", "Tensor");
  return op(self, other, alpha);
}

Tensor mul(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(mul, "torch.mul", "input, other", self, other);
  static const Binary op("aten::mul", "Tensor");
  return op(self, other);
}

Tensor mul(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(mul, "torch.mul", "input, other", self, other);
  static const TypedOperator<Tensor(const Tensor&, Scalar)> op("aten::mul", "Scalar");
  return op(self, other);
}

const Tensor& mul_(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(mul_, "torch.Tensor.mul_", "self, other", self, other);
  static const TypedOperator<void(const Tensor&, const Tensor&)> op("aten::mul_", "Tensor");
  op(self, other);
  return self;
}

const Tensor& div_(const Tensor& self, const Scalar& other) {
  STRATA_TORCH_FUNCTION(div_, "torch.Tensor.div_", "self, other", self, other);
  static const TypedOperator<void(const Tensor&, Scalar)> op("aten::div_", "Scalar");
  op(self, other);
  return self;
}

Tensor div(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(div, "torch.div", "input, other", self, other);
  static const Binary op("aten::div", "Tensor");
  return op(self, other);
}

Tensor exp(const Tensor& self) {
  STRATA_TORCH_FUNCTION(exp, "torch.exp", "input", self);
  static const Unary op("aten::exp");
  return op(self);
}

Tensor reciprocal(const Tensor& self) {
  STRATA_TORCH_FUNCTION(reciprocal, "torch.reciprocal", "input", self);
  static const Unary op("aten::reciprocal");
  return op(self);
}

Tensor neg(const Tensor& self) {
  STRATA_TORCH_FUNCTION(neg, "torch.neg", "input", self);
  static const Unary op("aten::neg");
  return op(self);
}

Tensor relu(const Tensor& self) {
  STRATA_TORCH_FUNCTION(relu, "torch.relu", "input", self);
  static const Unary op("aten::relu");
  return op(self);
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  static const BinaryAlpha op("aten::threshold_backward");
  return op(grad_output, self, threshold);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator+, "torch.Tensor.__add__", "self, other", a, b);
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator-, "torch.Tensor.__sub__", "self, other", a, b);
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator*, "torch.Tensor.__mul__", "self, other", a, b);
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator/, "torch.Tensor.__truediv__", "self, other", a, b);
  return div(a, b);
}
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, ops::wrapped_scalar_tensor(b)); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(ops::wrapped_scalar_tensor(a), b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, ops::wrapped_scalar_tensor(b)); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(ops::wrapped_scalar_tensor(a), b); }
const Tensor& operator+=(const Tensor& a, const Tensor& b) { return add_(a, b); }
const Tensor& operator+=(const Tensor& a, const Scalar& b) { return add_(a, ops::wrapped_scalar_tensor(b)); }
const Tensor& operator-=(const Tensor& a, const Tensor& b) { return add_(a, b, -1); }
const Tensor& operator-=(const Tensor& a, const Scalar& b) { return add_(a, ops::wrapped_scalar_tensor(b), -1); }
const Tensor& operator*=(const Tensor& a, const Tensor& b) { return mul_(a, b); }
const Tensor& operator*=(const Tensor& a, const Scalar& b) { return mul_(a, ops::wrapped_scalar_tensor(b)); }

Tensor operator-(const Tensor& a) {
  STRATA_TORCH_FUNCTION(operator-, "torch.Tensor.neg", "self", a);
  return neg(a);
}

// ---- matrix products ----
Tensor mm(const Tensor& self, const Tensor& mat2) {
  STRATA_TORCH_FUNCTION(mm, "torch.mm", "input, mat2", self, mat2);
  static const Binary op("aten::mm");
  return op(self, mat2);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  STRATA_TORCH_FUNCTION(addmm, "torch.addmm", "input, mat1, mat2, *, beta, alpha", self, mat1, mat2, beta,
                        alpha);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, Scalar, Scalar)> op("aten::addmm");
  return op(self, mat1, mat2, beta, alpha);
}

// ---- reductions, softmax, loss ----
Tensor _scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b, const Tensor& bias,
                  const Tensor& scale_result, std::optional<ScalarType> out_dtype, bool use_fast_accum) {
  STRATA_TORCH_FUNCTION(_scaled_mm, "torch._scaled_mm", "input, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum",
                        self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                    OptDtype, bool)>
      op("aten::_scaled_mm");
  return op(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(sum, "torch.sum", "input, *, dtype", self, dtype);
  static const TypedOperator<Tensor(const Tensor&, OptDtype)> op("aten::sum");
  return op(self, dtype);
}

Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(sum, "torch.sum", "input, dim, keepdim, *, dtype", self, dim, keepdim, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<IntArrayRef>, bool, OptDtype)> op("aten::sum",
                                                                                                 "dim_IntList");
  return op(self, dim, keepdim, dtype);
}

Tensor _log_softmax(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_TORCH_FUNCTION(_log_softmax, "torch._log_softmax", "input, dim, half_to_float", self, dim, half_to_float);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, bool)> op("aten::_log_softmax");
  return op(self, dim, half_to_float);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  ScalarType input_dtype) {
  STRATA_TORCH_FUNCTION(_log_softmax_backward_data, "torch._log_softmax_backward_data",
                        "grad_output, output, dim, input_dtype", grad_output, output, dim, input_dtype);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, ScalarType)> op(
      "aten::_log_softmax_backward_data");
  return op(grad_output, output, dim, input_dtype);
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

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         std::int64_t reduction, std::int64_t ignore_index, const Tensor& total_weight) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, std::int64_t,
                                    std::int64_t, const Tensor&)>
      op("aten::nll_loss_backward");
  return op(grad_output, self, target, weight, reduction, ignore_index, total_weight);
}

// ---- activations, softmax, value reductions, embedding, dropout ----
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

Tensor sigmoid(const Tensor& self) {
  STRATA_TORCH_FUNCTION(sigmoid, "torch.sigmoid", "input", self);
  static const Unary op("aten::sigmoid");
  return op(self);
}

Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  static const Binary op("aten::sigmoid_backward");
  return op(grad_output, output);
}

Tensor tanh(const Tensor& self) {
  STRATA_TORCH_FUNCTION(tanh, "torch.tanh", "input", self);
  static const Unary op("aten::tanh");
  return op(self);
}

Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  static const Binary op("aten::tanh_backward");
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

Tensor softmax(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(softmax, "torch.softmax", "input, dim, dtype", self, dim, dtype);
  detail::check_defined(self, "aten::softmax", 0, "self");
  return _softmax(dtype ? to(self, *dtype) : self, dim, false);
}

Tensor _softmax(const Tensor& self, std::int64_t dim, bool half_to_float) {
  STRATA_TORCH_FUNCTION(_softmax, "torch._softmax", "input, dim, half_to_float", self, dim, half_to_float);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, bool)> op("aten::_softmax");
  return op(self, dim, half_to_float);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim, ScalarType input_dtype) {
  STRATA_TORCH_FUNCTION(_softmax_backward_data, "torch._softmax_backward_data", "grad_output, output, dim, input_dtype",
                        grad_output, output, dim, input_dtype);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, ScalarType)> op("aten::_softmax_backward_data");
  return op(grad_output, output, dim, input_dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(mean, "torch.mean", "input, *, dtype", self, dtype);
  static const TypedOperator<Tensor(const Tensor&, OptDtype)> op("aten::mean");
  return op(self, dtype);
}

Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(mean, "torch.mean", "input, dim, keepdim, *, dtype", self, dim, keepdim, dtype);
  static const TypedOperator<Tensor(const Tensor&, std::optional<IntArrayRef>, bool, OptDtype)> op("aten::mean", "dim");
  return op(self, dim, keepdim, dtype);
}

Tensor max(const Tensor& self) {
  STRATA_TORCH_FUNCTION(max, "torch.max", "input", self);
  static const Unary op("aten::max");
  return op(self);
}

std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim) {
  STRATA_TORCH_FUNCTION(max, "torch.max", "input, dim, keepdim", self, dim, keepdim);
  static const OperatorHandle op = ops::op("aten::max", "dim");  // two outputs: boxed only
  return call_two_outputs(op, self, dim, keepdim);
}

Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  STRATA_TORCH_FUNCTION(argmax, "torch.argmax", "input, dim, keepdim", self, dim, keepdim);
  static const TypedOperator<Tensor(const Tensor&, std::optional<std::int64_t>, bool)> op("aten::argmax");
  return op(self, dim, keepdim);
}

// PyTorch's value_selecting_reduction_backward (CompositeImplicitAutograd, ReduceOps.cpp): grad and
// indices unsqueezed at dim unless keepdim, then scattered into zeros of `sizes`. PyTorch scatters in
// place unless a tensor is subclass-like, which a dispatch mode makes every tensor; strata always
// takes the out-of-place scatter, which is what a mode sees either way.
Tensor value_selecting_reduction_backward(const Tensor& grad, std::int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim) {
  detail::check_defined(grad, "aten::value_selecting_reduction_backward", 0, "grad");
  detail::check_defined(indices, "aten::value_selecting_reduction_backward", 2, "indices");
  const auto scatter_into_zeros = [&](const Tensor& g, const Tensor& i) {
    return scatter(zeros(sizes, {.dtype = grad.dtype(), .device = grad.device()}), dim, i, g);
  };
  if (!keepdim && !sizes.empty()) {
    const Tensor g = unsqueeze(grad, dim);
    return scatter_into_zeros(g, unsqueeze(indices, dim));
  }
  return scatter_into_zeros(grad, indices);
}

Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index, bool sparse_grad) {
  STRATA_TORCH_FUNCTION(gather, "torch.gather", "input, dim, index, *, sparse_grad", self, dim, index, sparse_grad);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, bool)> op("aten::gather");
  return op(self, dim, index, sparse_grad);
}

// PyTorch's gather_backward: grad added into zeros of self's sizes at `index` (scatter_add; PyTorch
// makes the zeros with new_zeros, which strata does not have, so a mode sees aten::zeros there).
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, std::int64_t dim, const Tensor& index, bool sparse_grad) {
  STRATA_CHECK(!sparse_grad, "gather_backward: strata has no sparse tensors (sparse_grad=True)");
  return scatter_add(zeros(self_sizes, {.dtype = grad.dtype(), .device = grad.device()}), dim, index, grad);
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  STRATA_TORCH_FUNCTION(scatter, "torch.scatter", "input, dim, index, src", self, dim, index, src);
  static const TypedOperator<Tensor(const Tensor&, std::int64_t, const Tensor&, const Tensor&)> op("aten::scatter", "src");
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

Tensor eq(const Tensor& self, const Tensor& other) {
  STRATA_TORCH_FUNCTION(eq, "torch.eq", "input, other", self, other);
  static const Binary op("aten::eq", "Tensor");
  return op(self, other);
}

Tensor isnan(const Tensor& self) {
  STRATA_TORCH_FUNCTION(isnan, "torch.isnan", "input", self);
  static const Unary op("aten::isnan");
  return op(self);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  STRATA_TORCH_FUNCTION(embedding, "torch.embedding", "weight, indices, padding_idx, scale_grad_by_freq, sparse", weight,
                        indices, padding_idx, scale_grad_by_freq, sparse);
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, bool, bool)> op("aten::embedding");
  return op(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, std::int64_t num_weights,
                                std::int64_t padding_idx, bool scale_grad_by_freq) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, std::int64_t, std::int64_t, bool)> op(
      "aten::embedding_dense_backward");
  return op(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// Note [dropout on CPU is bernoulli noise]
// PyTorch's at::dropout checks p and returns its input itself (no copy) when train is false, p is 0
// or the input is empty. Otherwise it calls native_dropout only where its fused kernel is acceptable
// (is_fused_kernel_acceptable: CUDA, XPU and lazy tensors), never on CPU. On CPU it runs
// _dropout_impl: p == 1 is input * zeros({}); else a noise tensor empty_like(input), bernoulli_(1 - p),
// div_(1 - p), and the output input * noise. strata does the same, so a dispatch mode sees those ops
// and the gradient is MulBackward0's grad * noise. native_dropout stays an op of its own (PyTorch's
// decompositions and nn layers on other devices call it).
Tensor dropout(const Tensor& input, double p, bool train) {
  STRATA_TORCH_FUNCTION(dropout, "torch.dropout", "input, p, train", input, p, train);
  detail::check_defined(input, "aten::dropout", 0, "input");
  if (!(p >= 0 && p <= 1)) [[unlikely]] {
    Error e(detail::str_cat("dropout probability has to be between 0 and 1, but got ", p));
    e.set_op("aten::dropout");
    throw e;
  }
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return mul(input, zeros(IntArrayRef{}, {.dtype = input.dtype(), .device = input.device()}));
  const Tensor noise = empty_like(input);
  bernoulli_(noise, 1 - p);
  div_(noise, 1 - p);
  return mul(input, noise);
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  STRATA_TORCH_FUNCTION(native_dropout, "torch.native_dropout", "input, p, train", input, p, train);
  static const OperatorHandle op = ops::op("aten::native_dropout");  // two outputs: boxed only
  return call_two_outputs(op, input, p, train ? IValue(*train) : IValue());
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&, double)> op("aten::native_dropout_backward");
  return op(grad_output, mask, scale);
}

// ---- making and filling tensors ----
Tensor empty(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(empty, "torch.empty", "size, *, dtype, device", size, options);
  static const TypedOperator<Tensor(IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool, OptFormat)> op(
      "aten::empty", "memory_format");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor zeros(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(zeros, "torch.zeros", "size, *, dtype, device", size, options);
  static const Factory op("aten::zeros");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor ones(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(ones, "torch.ones", "size, *, dtype, device", size, options);
  static const Factory op("aten::ones");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(full, "torch.full", "size, fill_value, *, dtype, device", size, fill_value, options);
  static const TypedOperator<Tensor(IntArrayRef, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::full");
  return make_variable(op(size, fill_value, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "end, *, dtype, device", end, options);
  static const TypedOperator<Tensor(Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange");
  return make_variable(op(end, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "start, end, *, dtype, device", start, end, options);
  static const TypedOperator<Tensor(Scalar, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange", "start");
  return make_variable(op(start, end, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "start, end, step, *, dtype, device", start, end, step, options);
  static const TypedOperator<Tensor(Scalar, Scalar, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange",
                                                                                                     "start_step");
  return make_variable(op(start, end, step, options.dtype, std::nullopt, options.device, std::nullopt));
}

namespace {
void release_nothing(void*, void*) {}  // from_blob's storage does not own its data
}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  const ScalarType dtype = options.dtype.value_or(ScalarType::Float32);
  const std::size_t item = element_size(dtype);
  Storage storage;
  named_after("from_blob", [&] {
    STRATA_CHECK(options.device.value_or(Device::CPU) == Device::CPU, "from_blob: only CPU memory can be wrapped, not ",
                 *options.device);
    check_size_nonnegative(sizes);
    STRATA_CHECK(strides.size() == sizes.size(), "from_blob: ", sizes.size(), " sizes but ", strides.size(), " strides");
    for (std::int64_t s : strides) STRATA_CHECK(s >= 0, "from_blob: negative strides are not supported, got ", shape_str(strides));
    const auto nbytes = static_cast<std::size_t>(storage_nbytes(sizes, strides, item, 0));
    STRATA_CHECK(nbytes == 0 || data != nullptr, "from_blob: null data for ", nbytes, " bytes");
    STRATA_CHECK(reinterpret_cast<std::uintptr_t>(data) % item == 0, "from_blob: data at ", data,
                 " is not aligned to the ", item, "-byte elements of ", dtype_name(dtype));
    storage = StorageImpl::wrap(data, nbytes, &release_nothing, nullptr);
  });
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), 0, DimVector(sizes), DimVector(strides), dtype, Device::CPU));
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  DimVector strides(sizes.size(), 0);
  std::int64_t stride = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride = saturating_mul(stride, std::max<std::int64_t>(sizes[i], 1));
  }
  return from_blob(data, sizes, strides, options);
}

Tensor empty_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(empty_like, "torch.empty_like", "input, *, dtype, device", self, options);
  static const Like op("aten::empty_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor ones_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(ones_like, "torch.ones_like", "input, *, dtype, device", self, options);
  static const Like op("aten::ones_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor ones_like_python(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  static const Like op("aten::ones_like");
  return make_variable(op(self, self.dtype(), Layout::Strided, self.device(), false, memory_format));
}

Tensor zeros_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(zeros_like, "torch.zeros_like", "input, *, dtype, device", self, options);
  static const Like op("aten::zeros_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(new_empty_strided, "torch.Tensor.new_empty_strided", "self, size, stride, *, dtype, device",
                        self, size, stride, options);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)> op(
      "aten::new_empty_strided");
  return op(self, size, stride, options.dtype, std::nullopt, options.device, std::nullopt);
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  STRATA_TORCH_FUNCTION(clone, "torch.clone", "input, *, memory_format", self, memory_format);
  static const TypedOperator<Tensor(const Tensor&, OptFormat)> op("aten::clone");
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

// ---- random ----
Tensor randn(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  STRATA_TORCH_FUNCTION(randn, "torch.randn", "size, *, dtype, device, generator", size, options, generator);
  if (generator) {
    static const GeneratorFactory op("aten::randn", "generator");
    return make_variable(op(size, generator_of(generator), options.dtype, std::nullopt, options.device, std::nullopt));
  }
  static const Factory op("aten::randn");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor rand(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  STRATA_TORCH_FUNCTION(rand, "torch.rand", "size, *, dtype, device, generator", size, options, generator);
  if (generator) {
    static const GeneratorFactory op("aten::rand", "generator");
    return make_variable(op(size, generator_of(generator), options.dtype, std::nullopt, options.device, std::nullopt));
  }
  static const Factory op("aten::rand");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef size, const TensorOptions& options,
               const Generator* generator) {
  STRATA_TORCH_FUNCTION(randint, "torch.randint", "low, high, size, *, dtype, device, generator", low, high, size,
                        options, generator);
  if (generator) {
    static const TypedOperator<Tensor(std::int64_t, std::int64_t, IntArrayRef, GeneratorImpl*, OptDtype, OptLayout,
                                      OptDevice, OptBool)>
        op("aten::randint", "low_generator");
    return make_variable(op(low, high, size, generator_of(generator), options.dtype, std::nullopt, options.device, std::nullopt));
  }
  static const TypedOperator<Tensor(std::int64_t, std::int64_t, IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)> op(
      "aten::randint", "low");
  return make_variable(op(low, high, size, options.dtype, std::nullopt, options.device, std::nullopt));
}

const Tensor& normal_(const Tensor& self, double mean, double std, const Generator* generator) {
  STRATA_TORCH_FUNCTION(normal_, "torch.Tensor.normal_", "self, mean, std, *, generator", self, mean, std, generator);
  static const RandomFill op("aten::normal_");
  op(self, mean, std, generator_of(generator));
  return self;
}

const Tensor& uniform_(const Tensor& self, double from, double to, const Generator* generator) {
  STRATA_TORCH_FUNCTION(uniform_, "torch.Tensor.uniform_", "self, from, to, *, generator", self, from, to, generator);
  static const RandomFill op("aten::uniform_");
  op(self, from, to, generator_of(generator));
  return self;
}

const Tensor& bernoulli_(const Tensor& self, double p, const Generator* generator) {
  STRATA_TORCH_FUNCTION(bernoulli_, "torch.Tensor.bernoulli_", "self, p, *, generator", self, p, generator);
  static const TypedOperator<void(const Tensor&, double, GeneratorImpl*)> op("aten::bernoulli_", "float");
  op(self, p, generator_of(generator));
  return self;
}

}  // namespace strata
