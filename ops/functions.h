// ops/functions.h: the front end, one C++ function per op (PyTorch's torch.* / Tensor methods).
// Each holds a TypedOperator in a function-local static (the op is looked up once) and calls it:
// unboxed when only the CPU kernel would run, through the dispatcher otherwise. Composite functions
// (reshape, contiguous, sum_to, and the nn functionals in nn/) call these; they never reach the
// dispatcher as themselves. Each public function first announces itself to the function modes under
// its PyTorch name (ops/torch_function.h, core/interpose/function_mode.h); the internal ones PyTorch does not
// expose as torch functions (_unsafe_view, sum_to, threshold_backward, nll_loss_forward,
// nll_loss_backward, the *_backward ops of the activations, embedding and dropout,
// value_selecting_reduction_backward) announce nothing.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "../core/dispatch/dispatcher.h"
#include "../core/generator.h"
#include "../core/dispatch/ivalue.h"
#include "../core/tensor.h"
#include "typed_operator.h"

namespace strata {

struct TensorOptions {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
};

// ---- views ----
Tensor t(const Tensor& self);
Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1);
Tensor view(const Tensor& self, IntArrayRef size);
// view of a tensor nothing else aliases (a fresh result), which autograd treats as a new tensor.
Tensor _unsafe_view(const Tensor& self, IntArrayRef size);
Tensor expand(const Tensor& self, IntArrayRef size, bool implicit = false);
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<std::int64_t> storage_offset = std::nullopt);
Tensor unsqueeze(const Tensor& self, std::int64_t dim);
Tensor squeeze(const Tensor& self, std::int64_t dim);
// self's slice at `index` of dimension `dim`, which it drops (x[1], x[:, -1]); negative dim and index wrap.
Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index);
// Python's x[start:end:step] along `dim`: start and end wrap once and are clamped to the size; step > 0.
Tensor slice(const Tensor& self, std::int64_t dim = 0, std::optional<std::int64_t> start = std::nullopt,
             std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1);
// `length` elements of dimension `dim` from `start` (which may be negative): a slice that must fit,
// PyTorch's CompositeImplicit narrow (it dispatches aten::slice).
Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length);
// detach() is in ops/detach.h.
// The gradients of select and slice: zeros of `input_sizes` with `grad_output` in the viewed part.
Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t index);
Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t start,
                      std::int64_t end, std::int64_t step);

// ---- joining ----
// The tensors joined along `dim` into a new tensor of their promoted dtype; 1-D empty tensors are
// skipped (PyTorch's legacy rule). cat({a, b}, 1).
Tensor cat(TensorList tensors, std::int64_t dim = 0);
// The tensors, all of one size, joined along a new dimension `dim`: cat of their unsqueezes.
Tensor stack(TensorList tensors, std::int64_t dim = 0);

namespace detail {
// A composite's check of a Tensor argument (Note [Composites check for undefined arguments]): an
// undefined one is refused with the dispatcher's words, named after the aten op `op` the composite
// mirrors ("aten::reshape"); `position` and `name` are the schema's.
[[noreturn, gnu::cold]] void throw_undefined_argument(const char* op, int position, const char* name);
// sum_to_size's error, "size {[2, 3]} is not expandable to size {[3]}.", named after `op`.
[[noreturn, gnu::cold]] void throw_not_expandable(const char* op, IntArrayRef size, IntArrayRef sizes);
inline void check_defined(const Tensor& t, const char* op, int position, const char* name) {
  if (!t.defined()) [[unlikely]] throw_undefined_argument(op, position, name);
}
}  // namespace detail

// Composites: a view when the layout allows, else a contiguous copy (as PyTorch's reshape/contiguous).
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor contiguous(const Tensor& self);
// PyTorch's at::sum_to: sums `self` down to `shape` (leading dims, and dims where shape has 1), then
// views it as `shape`. Used where a gradient must match a broadcast input's shape. A `shape` that
// does not broadcast to self's sizes is refused first, in sum_to_size's words.
Tensor sum_to(const Tensor& self, IntArrayRef shape);
// Tensor.to(dtype): self when it already has the dtype, else a converted copy (aten::_to_copy).
Tensor to(const Tensor& self, ScalarType dtype);

// ---- arithmetic ----
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);  // add.Scalar
const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const Scalar& other);  // mul.Scalar
const Tensor& mul_(const Tensor& self, const Tensor& other);
Tensor div(const Tensor& self, const Tensor& other);
const Tensor& div_(const Tensor& self, const Scalar& other);  // div_.Scalar
Tensor neg(const Tensor& self);
Tensor exp(const Tensor& self);
Tensor reciprocal(const Tensor& self);
Tensor relu(const Tensor& self);
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
// With a number, as LibTorch's operators: + and * are add.Scalar and mul.Scalar; - and / dispatch
// sub.Tensor and div.Tensor with the number as a wrapped 0-d tensor (what PyTorch's sub.Scalar and
// div.Scalar do), so it promotes as a Python number does: int64 tensor / 2 is float32.
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
// Compound assignment writes `a` in place: += is add_, -= is add_ with alpha -1 (strata has no
// sub_), *= is mul_. There is no /=: strata has div_ with a number only (div_.Scalar).
const Tensor& operator+=(const Tensor& a, const Tensor& b);
const Tensor& operator+=(const Tensor& a, const Scalar& b);
const Tensor& operator-=(const Tensor& a, const Tensor& b);
const Tensor& operator-=(const Tensor& a, const Scalar& b);
const Tensor& operator*=(const Tensor& a, const Tensor& b);
const Tensor& operator*=(const Tensor& a, const Scalar& b);

// ---- matrix products ----
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1);
// (float(self) * scale_a) @ (float(mat2) * scale_b) + bias, as out_dtype (default self's): float8 or
// int8 operands, float32 one-element scales (Note [_scaled_mm on CPU]). An undefined bias or
// scale_result is None.
Tensor _scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                  const Tensor& bias = {}, const Tensor& scale_result = {},
                  std::optional<ScalarType> out_dtype = std::nullopt, bool use_fast_accum = false);

// ---- reductions, softmax, loss ----
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor _log_softmax(const Tensor& self, std::int64_t dim, bool half_to_float = false);
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim, ScalarType input_dtype);
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const Tensor& weight,
                                            std::int64_t reduction, std::int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         std::int64_t reduction, std::int64_t ignore_index, const Tensor& total_weight);

// ---- activations, softmax, value reductions, embedding, dropout (the inference ops) ----
Tensor sigmoid(const Tensor& self);
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);
Tensor tanh(const Tensor& self);
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
// approximate: "none" (the exact erf form) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate = "none");
// softmax.int, a composite as in PyTorch: _softmax of self, converted to `dtype` first when given.
Tensor softmax(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor _softmax(const Tensor& self, std::int64_t dim, bool half_to_float = false);
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim, ScalarType input_dtype);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& self);
// max.dim: (values, int64 indices of the first maximum; NaN counts as the maximum).
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
// max.dim's derivative, a composite as in PyTorch: grad scattered into zeros of `sizes` at `indices`.
Tensor value_selecting_reduction_backward(const Tensor& grad, std::int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim);
// gather: self's elements at `index` along dim; scatter.src/.value and scatter_add: a copy of self
// with src (or value) written, or added, at `index` along dim.
Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index, bool sparse_grad = false);
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, std::int64_t dim, const Tensor& index, bool sparse_grad);
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor eq(const Tensor& self, const Tensor& other);
Tensor isnan(const Tensor& self);
Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx = -1, bool scale_grad_by_freq = false,
                 bool sparse = false);
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, std::int64_t num_weights,
                                std::int64_t padding_idx, bool scale_grad_by_freq);
// dropout, a composite as PyTorch's on CPU: input itself when !train, p == 0 or input is empty, else
// input * (bernoulli_(1 - p) noise / (1 - p)) (Note [dropout on CPU is bernoulli noise]).
Tensor dropout(const Tensor& input, double p, bool train);
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train);
Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale);

// ---- making and filling tensors ----
Tensor empty(IntArrayRef size, const TensorOptions& options = {});
// LibTorch's torch::zeros, ones, full: full without a dtype takes fill_value's (bool, int64 or float32).
Tensor zeros(IntArrayRef size, const TensorOptions& options = {});
Tensor ones(IntArrayRef size, const TensorOptions& options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options = {});
// torch::arange: [start, end) by step. Without a dtype, int64 when every bound is an integer
// (arange(5), arange(1, 4)), else float32 (arange(0, 1, 0.25)).
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options = {});
// torch::from_blob: a CPU tensor over memory the caller owns, without a copy (default dtype float32,
// contiguous strides unless given). Lifetime: strata never frees or reallocates `data`; the caller
// keeps it alive and in place for as long as the tensor or anything sharing its storage exists (its
// views, detach(), tensors autograd saved, a module holding it as a parameter). Writes through the
// tensor (in-place ops, an optimizer step) write the caller's memory. `data` must be aligned to the
// dtype's element size. clone() the result for a tensor that owns its data.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor empty_like(const Tensor& self, const TensorOptions& options = {});
Tensor ones_like(const Tensor& self, const TensorOptions& options = {});
// torch.ones_like(self, memory_format=...) as Python calls it: the binding fills dtype, layout, device and
// pin_memory from `self`, so the op receives them all. backward()'s implicit gradient is made this way
// (_make_grads: torch.ones_like(out, memory_format=torch.preserve_format)).
Tensor ones_like_python(const Tensor& self, std::optional<MemoryFormat> memory_format);
Tensor zeros_like(const Tensor& self, const TensorOptions& options = {});
Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, const TensorOptions& options = {});
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format = std::nullopt);
const Tensor& fill_(const Tensor& self, const Scalar& value);
const Tensor& zero_(const Tensor& self);
const Tensor& copy_(const Tensor& self, const Tensor& src, bool non_blocking = false);

// ---- random (the default generator unless one is given; see ops/native/distributions.h) ----
Tensor randn(IntArrayRef size, const TensorOptions& options = {}, const Generator* generator = nullptr);
Tensor rand(IntArrayRef size, const TensorOptions& options = {}, const Generator* generator = nullptr);
Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef size, const TensorOptions& options = {},
               const Generator* generator = nullptr);
const Tensor& normal_(const Tensor& self, double mean = 0, double std = 1, const Generator* generator = nullptr);
const Tensor& uniform_(const Tensor& self, double from = 0, double to = 1, const Generator* generator = nullptr);
// bernoulli_.float: each element of self becomes 1 with probability p, else 0.
const Tensor& bernoulli_(const Tensor& self, double p = 0.5, const Generator* generator = nullptr);

}  // namespace strata

#include "tensor_methods.h"  // Tensor's methods, which forward to the functions above
