// ops/composites.cpp: the composite front ends, which call other ops and never reach the dispatcher
// as themselves (PyTorch's CompositeImplicitAutograd functions): reshape, contiguous, sum_to,
// flatten, softmax, dropout, and the derivatives value_selecting_reduction_backward and gather_backward;
// and narrow, a composite op (Note [A composite op decomposes at Autograd], ops/composite_op.h),
// whose kernel is here.
#include "ops/functions.h"

#include "ops/composite_op.h"
#include "ops/named_after.h"
#include "ops/op_table.h"
#include "ops/torch_function.h"
#include "ops/typed_operator.h"

namespace strata {

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

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  STRATA_TORCH_FUNCTION(reshape, "torch.reshape", "input, shape", self, shape);
  detail::check_defined(self, "aten::reshape", 0, "self");
  const DimVector sizes = infer_size(shape, self.numel());
  if (view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  return _unsafe_view(clone(self, MemoryFormat::Contiguous), sizes);  // PyTorch's reshape: the copy is nobody's view
}

// PyTorch 2.8's flatten.using_ints: its check, then native::reshape of the merged shape (the product
// of the merged sizes, not -1, which an empty dimension would leave ambiguous).
Tensor flatten(const Tensor& self, std::int64_t start_dim, std::int64_t end_dim) {
  STRATA_TORCH_FUNCTION(flatten, "torch.flatten", "input, start_dim, end_dim", self, start_dim, end_dim);
  detail::check_defined(self, "aten::flatten", 0, "self");
  const std::int64_t start = named_after("aten::flatten", [&] { return wrap_dim(start_dim, self.dim()); });
  const std::int64_t end = named_after("aten::flatten", [&] { return wrap_dim(end_dim, self.dim()); });
  named_after("aten::flatten", [&] {
    STRATA_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  });
  if (self.dim() == 0) return reshape(self, {1});
  if (start == end) return self;
  DimVector shape;
  std::int64_t merged = 1;
  for (std::int64_t i = 0; i < self.dim(); ++i) {
    if (i < start || i > end) shape.push_back(self.size(i));
    else merged *= self.size(i);
    if (i == end) shape.push_back(merged);
  }
  return reshape(self, shape);
}

Tensor contiguous(const Tensor& self) {
  STRATA_TORCH_FUNCTION(contiguous, "torch.Tensor.contiguous", "self", self);
  detail::check_defined(self, "aten::contiguous", 0, "self");
  return self.is_contiguous() ? self : clone(self, MemoryFormat::Contiguous);
}

Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length) {
  STRATA_TORCH_FUNCTION(narrow, "torch.narrow", "input, dim, start, length", self, dim, start, length);
  static const OperatorHandle op = ops::op("aten::narrow");
  Stack stack;
  detail::push_argument(stack, self);
  stack.emplace_back(dim);
  stack.emplace_back(start);
  stack.emplace_back(length);
  op.call(stack);
  return std::move(stack.back().to_tensor());
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

Tensor softmax(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(softmax, "torch.softmax", "input, dim, dtype", self, dim, dtype);
  detail::check_defined(self, "aten::softmax", 0, "self");
  return _softmax(dtype ? to(self, *dtype) : self, dim, false);
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

// PyTorch's gather_backward: grad added into zeros of self's sizes at `index` (scatter_add; PyTorch
// makes the zeros with new_zeros, which strata does not have, so a mode sees aten::zeros there).
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, std::int64_t dim, const Tensor& index, bool sparse_grad) {
  STRATA_CHECK(!sparse_grad, "gather_backward: strata has no sparse tensors (sparse_grad=True)");
  return scatter_add(zeros(self_sizes, {.dtype = grad.dtype(), .device = grad.device()}), dim, index, grad);
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

// PyTorch's layer_norm (CompositeImplicitAutograd): native_layer_norm's first output, so a dispatch
// mode sees aten.native_layer_norm.default only. cudnn_enable is accepted and ignored, as on CPU.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias, double eps,
                  bool cudnn_enable) {
  STRATA_TORCH_FUNCTION(layer_norm, "torch.layer_norm", "input, normalized_shape, weight, bias, eps, cudnn_enable", input,
                        normalized_shape, weight, bias, eps, cudnn_enable);
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

}  // namespace strata

namespace strata::ops {

namespace {
// PyTorch 2.8's narrow_symint: its checks, then a slice.
void narrow_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 4;  // self, dim, start, length
  const Tensor& self = args[0].to_tensor();
  const std::int64_t dim = args[1].to_int(), length = args[3].to_int();
  std::int64_t start = args[2].to_int();
  STRATA_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  STRATA_CHECK(length >= 0, "narrow(): length must be non-negative.");
  const std::int64_t size = self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
  STRATA_CHECK(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ", size,
               "], but got ", start, ")");
  if (start < 0) start += size;
  STRATA_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size, ").");
  Tensor out = slice(self, dim, start, start + length, 1);
  stack.truncate(stack.size() - 4);
  stack.emplace_back(std::move(out));
}
}  // namespace

void register_composite_ops(Dispatcher& d) {
  def_composite(d, "aten", "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
                {&narrow_kernel, "narrow (decomposes into slice)"});
}

}  // namespace strata::ops
