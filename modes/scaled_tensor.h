// modes/scaled_tensor.h: ScaledTensor, a float8-style scaled wrapper subclass (torchao's Float8Tensor):
// float8_e4m3fn (or int8) data and a float32 scale standing for data / scale, with the float32 dtype
// outside. mm and addmm on it run aten::_scaled_mm; views, clone and detach act on the data and keep
// the scale; other ops see its float value. Autograd runs above it, so a Linear whose weight is one
// trains, with plain float gradients. A second, grouped form holds int8 data with one float32 scale
// per group of consecutive elements along a matrix's reduction dimension (llama2.c's Q8_0, Note
// [ScaledTensor groups]); its mm runs runq.c's int8 x int8 product.
#pragma once

#include "../core/interpose/interposer.h"

namespace strata::tracer {

// Note [ScaledTensor]
// Made as torchao's hp_tensor_to_float8_dynamic makes a Float8Tensor: amax = max |x| (over the
// elements, read on the host), scale = max_representable / max(amax, 1e-12) computed in float64 and
// rounded to float32 (448 for float8_e4m3fn, 127 for int8), data = x * scale converted to the data
// dtype. torchao clamps x * scale to +-max before the conversion; with this scale the product is at
// most max * (1 + 2^-23), which float8 rounds to max anyway, so the clamp is left out. int8 data is
// rounded to nearest (even), as torchao's int8 quantizers do. to_float() is data.to(float32) / scale.
// The handler follows torchao's float8_ops:
//  - mm(a, b), addmm(bias, a, b) (beta = alpha = 1): a plain float operand is first made a
//    ScaledTensor dynamically (Float8Linear's input cast); then preprocess_addmm (a made row-major
//    with contiguous() when it is not; a row-major b made column-major with t().contiguous().t()),
//    the scale reciprocals, and _scaled_mm(a_data, b_data, 1/a_scale, 1/b_scale, bias, None,
//    float32). A bias that is not one row of the output's width is added after the product.
//  - t, transpose, view, _unsafe_view, as_strided, clone, detach: the op on the data, the same scale.
//  - add_.Tensor (an optimizer's update): the payload's data and scale are replaced by those of the
//    updated float value (dynamic scaling again). Views made earlier keep the old data and scale.
//  - any other op: the ScaledTensor arguments are replaced by their float values and the op runs on
//    those (torchao's unwrap to original precision); it may not write into a ScaledTensor.
// The handler's own ops run below Autograd, as a __torch_dispatch__ does: nothing they do is recorded.
//
// Note [ScaledTensor groups]
// The grouped form is what llama2.c's export.py (version 2) writes and runq.c runs: a 2-D int8 matrix
// `data` and float32 `scales` with one scale per group of `group_size` consecutive elements along one
// dimension, the group dimension (1 for a weight W [out, in] as stored; 0 for its transpose W^T, the
// right operand of x @ W^T). Here a scale is a multiplier, value = data * scale, as the file holds it
// (the per-tensor form's scale divides: its convention is torchao's, this one llama2.c's; a reciprocal
// would round, and the file's scales must reach the product unchanged). Made by from_float_grouped
// (export.py's quantize_q80: s = max|x| / 127 per group, q = round-half-even(x / s), float32) or
// wrapped from a file's tensors by wrap_grouped. Its handler:
//  - mm(x, b) and addmm(bias, x, b) with b grouped along dim 0 (the reduction dimension) and x a
//    plain float32 matrix: runq.c's product (modes/scaled_groups.h). x is quantized per group of the
//    same size (s = max|x| / 127, q = round-half-away(x / s), C's round(), as runq.c quantizes each
//    activation before each projection), each output is sum over groups g, in group order, of
//    float(int32 dot of group g) * w_scale * x_scale in float32, and rows of the output are computed
//    in parallel. Integer dots are exact, so the only rounding is the activations' quantization and
//    the float32 sum: the result equals runq.c's up to the order of float32 operations the compiler
//    keeps. Other mm/addmm operands run on the float values.
//  - embedding(weight grouped along dim 1, indices): the chosen rows dequantized (runq.c's token
//    lookup, without dequantizing the table).
//  - t and transpose: on data and scales together, the group dimension moving with them; detach and
//    clone: on both. Views that would split a group (view, as_strided, _unsafe_view) run on the float
//    value instead, as any other op does.
//  - add_.Tensor: re-quantized in groups along the same dimension.
// A decode step reads one byte per weight plus 4 / group_size bytes of scale, against 4 bytes for
// float32: 3.8x less memory traffic at groups of 64 (3.6x at 32), which is what makes it faster.
class ScaledTensor final : public TensorSubclass {
 public:
  // Dynamic scaling of a float tensor (float32 or float64; CPU) to `dtype` (float8_e4m3fn or int8).
  static Tensor from_float(const Tensor& x, ScalarType dtype = ScalarType::Float8_e4m3fn, bool requires_grad = false);
  // A ScaledTensor over `data` (float8_e4m3fn or int8) and `scale` (a one-element float32 tensor).
  static Tensor wrap(Tensor data, Tensor scale, bool requires_grad = false);
  // The grouped form (Note [ScaledTensor groups]) of a 2-D float tensor, groups along dim 1 (its
  // number of columns a multiple of group_size); the values must be finite.
  static Tensor from_float_grouped(const Tensor& x, std::int64_t group_size);
  // The grouped form over `data` (int8 [rows, cols]) and `scales` (float32 [rows, cols / group_size]
  // for group_dim 1; [rows / group_size, cols] for group_dim 0), used in place (no copy).
  static Tensor wrap_grouped(Tensor data, Tensor scales, std::int64_t group_size, int group_dim = 1);
  // The ScaledTensor behind `t`, or null when `t` is not one.
  static const ScaledTensor* of(const Tensor& t);
  // t's float32 value (data / scale); a plain tensor as it is.
  static Tensor to_float(const Tensor& t);

  const Tensor& data() const { return data_; }
  const Tensor& scale() const { return scale_; }  // one element, or the groups' scales
  std::int64_t group_size() const { return group_size_; }  // 0 for the per-tensor form
  int group_dim() const { return group_dim_; }
  bool grouped() const { return group_size_ > 0; }
  Tensor to_float() const;

  std::string_view type_name() const override { return "ScaledTensor"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor& self) const override;  // {"_data", "_scale"}
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "ScaledTensor(data=tensor(...), scale=tensor(...))"

 private:
  ScaledTensor(Tensor data, Tensor scale, std::int64_t group_size = 0, int group_dim = 1)
      : data_(std::move(data)), scale_(std::move(scale)), group_size_(group_size), group_dim_(group_dim) {}
  // The grouped form (scaled_tensor_groups.cpp): whether an op has a grouped operand, its handler,
  // the float value, and what flatten keeps for unflatten (null for the per-tensor form).
  static bool has_grouped_argument(const OperatorHandle& op, const Stack& stack);
  static void dispatch_grouped(const OperatorHandle& op, Stack& stack);
  Tensor grouped_to_float() const;
  std::shared_ptr<const void> group_context() const;
  static Tensor unflatten_grouped(const FlattenedTensor& flat);
  // Any op the handlers do not map: ScaledTensor arguments replaced by their float values.
  static void run_on_float_values(const OperatorHandle& op, Stack& stack);
  Tensor data_;
  Tensor scale_;
  std::int64_t group_size_ = 0;
  int group_dim_ = 1;
};

}  // namespace strata::tracer
