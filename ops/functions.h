// ops/functions.h: the front end, one C++ function per op (PyTorch's torch.* / Tensor methods).
// Most are generated from the op rows (ops/generated/functions.h, included below: Note [A row holds
// its op's facts], ops/boxing.h); this file declares the ones written by hand: factories, which take
// TensorOptions and return through make_variable (ops/factories.cpp), ops with two outputs and ops
// whose C++ defaults differ from their schema's (ops/functions.cpp), and composites, which call other
// ops and never reach the dispatcher as themselves (ops/composites.cpp). Each function holds a
// TypedOperator in a function-local static (the op is looked up once) and calls it: unboxed when only
// the CPU kernel would run, through the dispatcher otherwise. Each public function first announces
// itself to the function modes under its PyTorch name (ops/torch_function.h); internal ones announce
// nothing.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>

#include "../core/dispatch/dispatcher.h"
#include "../core/generator.h"
#include "../core/dispatch/ivalue.h"
#include "../core/tensor.h"
#include "tensor_literal.h"
#include "generated/functions.h"
#include "typed_operator.h"

namespace strata {

struct TensorOptions {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
};

// ---- ops written by hand (ops/functions.cpp) ----
// C++ defaults the schemas do not have: half_to_float is false unless asked.
Tensor _log_softmax(const Tensor& self, std::int64_t dim, bool half_to_float = false);
Tensor _softmax(const Tensor& self, std::int64_t dim, bool half_to_float = false);
// Two outputs, returned as a tuple: nll_loss_forward's (output, total_weight); max.dim's (values, int64
// indices of the first maximum; NaN counts as the maximum); native_dropout's (output, mask).
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const Tensor& weight,
                                            std::int64_t reduction, std::int64_t ignore_index);
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train);
// sort's (values, int64 indices) along dim, stable; topk's k largest (or smallest) along dim, in order.
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                bool sorted = true);
// Layer normalisation over the trailing dimensions normalized_shape: (out, mean, rstd), mean and rstd
// shaped as input's leading dimensions followed by 1s. layer_norm is its composite (output 0).
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                                                     const Tensor& bias, double eps);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-05, bool cudnn_enable = true);
// The gradients for input, weight and bias where output_mask asks (zeros elsewhere, where PyTorch's
// are undefined): native_layer_norm's backward op.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                                              std::array<bool, 3> output_mask);
// Tensor.to(dtype): self when it already has the dtype, else a converted copy (aten::_to_copy).
Tensor to(const Tensor& self, ScalarType dtype);

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
// Compound assignment writes `a` in place: += is add_, -= is sub_, *= is mul_ (a number as a wrapped
// 0-d tensor, as Python passes it). There is no /=: strata has div_ with a number only (div_.Scalar).
const Tensor& operator+=(const Tensor& a, const Tensor& b);
const Tensor& operator+=(const Tensor& a, const Scalar& b);
const Tensor& operator-=(const Tensor& a, const Tensor& b);
const Tensor& operator-=(const Tensor& a, const Scalar& b);
const Tensor& operator*=(const Tensor& a, const Tensor& b);
const Tensor& operator*=(const Tensor& a, const Scalar& b);

// ---- composites (ops/composites.cpp): they call other ops ----
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

// A view when the layout allows, else a contiguous copy (as PyTorch's reshape/contiguous).
Tensor reshape(const Tensor& self, IntArrayRef shape);
// flatten.using_ints: dimensions start_dim..end_dim merged into one, through reshape (a 0-d tensor
// becomes [1]; start_dim == end_dim returns self).
Tensor flatten(const Tensor& self, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
Tensor contiguous(const Tensor& self);
// Pieces of self along dim, each a view of self (ops/split_ops.cpp): split's of split_size (the last
// one shorter), or of the given sizes (which must add up to the dimension's size: split_with_sizes);
// chunk's `chunks` pieces of ceil(size / chunks), fewer when the last would be empty, as PyTorch's.
std::vector<Tensor> split(const Tensor& self, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, std::int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, std::int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, std::int64_t chunks, std::int64_t dim = 0);
// `length` elements of dimension `dim` from `start` (which may be negative): a slice that must fit,
// PyTorch's CompositeImplicit narrow (it dispatches aten::slice). detach() is in ops/detach.h.
Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length);
// PyTorch's at::sum_to: sums `self` down to `shape` (leading dims, and dims where shape has 1), then
// views it as `shape`. Used where a gradient must match a broadcast input's shape. A `shape` that
// does not broadcast to self's sizes is refused first, in sum_to_size's words.
Tensor sum_to(const Tensor& self, IntArrayRef shape);
// softmax.int, a composite as in PyTorch: _softmax of self, converted to `dtype` first when given.
Tensor softmax(const Tensor& self, std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// max.dim's derivative, a composite as in PyTorch: grad scattered into zeros of `sizes` at `indices`.
Tensor value_selecting_reduction_backward(const Tensor& grad, std::int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim);
// gather's derivative: grad added into zeros of self's sizes at `index`.
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, std::int64_t dim, const Tensor& index, bool sparse_grad);
// dropout, a composite as PyTorch's on CPU: input itself when !train, p == 0 or input is empty, else
// input * (bernoulli_(1 - p) noise / (1 - p)) (Note [dropout on CPU is bernoulli noise]).
Tensor dropout(const Tensor& input, double p, bool train);

// ---- comparisons, where, equal, allclose (ops/comparisons.cpp) ----
// LibTorch's comparison operators give bool tensors: a > b is gt.Tensor, a > 0 gt.Scalar, and a
// number on the left is the reversed comparison (0 > a is a < 0), as in LibTorch.
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator==(const Scalar& a, const Tensor& b);
Tensor operator!=(const Scalar& a, const Tensor& b);
Tensor operator>(const Scalar& a, const Tensor& b);
Tensor operator>=(const Scalar& a, const Tensor& b);
Tensor operator<(const Scalar& a, const Tensor& b);
Tensor operator<=(const Scalar& a, const Tensor& b);
// where with a number for self or other: the number as a 0-d tensor of the promoted dtype
// (scalar_tensor), then where.self, as PyTorch's where.ScalarSelf and where.ScalarOther do.
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
// Whether self and other have the same sizes and elements (NaN equals nothing): LibTorch's
// torch::equal, a composite here (eq.Tensor). Tensors of different dtypes are refused, as PyTorch does.
bool equal(const Tensor& self, const Tensor& other);
// Whether |self - other| <= atol + rtol * |other| everywhere (broadcast; equal infinities are close;
// NaNs are close to each other only with equal_nan): LibTorch's torch::allclose, computed as
// PyTorch's isclose composite computes it.
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);

// ---- making tensors (ops/factories.cpp) ----
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
// torch::eye: the n x n (or n x m) identity matrix, float32 unless a dtype is given.
Tensor eye(std::int64_t n, const TensorOptions& options = {});
Tensor eye(std::int64_t n, std::int64_t m, const TensorOptions& options = {});
// torch::linspace: `steps` values from start to end, both included (float32 unless a dtype is given),
// the values PyTorch's CPU kernel computes (Note [linspace computes PyTorch's values]).
Tensor linspace(const Scalar& start, const Scalar& end, std::int64_t steps, const TensorOptions& options = {});
// at::scalar_tensor: a 0-d tensor holding s, float32 unless a dtype is given. As ATen's (what
// PyTorch's formulas call), it announces nothing to function modes and is not a make_variable factory.
Tensor scalar_tensor(const Scalar& s, const TensorOptions& options);
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
// Random tensors: the default generator unless one is given (ops/native/distributions.h).
Tensor randn(IntArrayRef size, const TensorOptions& options = {}, const Generator* generator = nullptr);
Tensor rand(IntArrayRef size, const TensorOptions& options = {}, const Generator* generator = nullptr);
Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef size, const TensorOptions& options = {},
               const Generator* generator = nullptr);

}  // namespace strata

#include "tensor_methods.h"  // Tensor's methods, which forward to the functions above
