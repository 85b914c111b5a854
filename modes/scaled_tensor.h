// modes/scaled_tensor.h: ScaledTensor, a float8-style scaled wrapper subclass (torchao's Float8Tensor):
// float8_e4m3fn (or int8) data and a float32 scale standing for data / scale, with the float32 dtype
// outside. mm and addmm on it run aten::_scaled_mm; views, clone and detach act on the data and keep
// the scale; other ops see its float value. Autograd runs above it, so a Linear whose weight is one
// trains, with plain float gradients.
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
class ScaledTensor final : public TensorSubclass {
 public:
  // Dynamic scaling of a float tensor (float32 or float64; CPU) to `dtype` (float8_e4m3fn or int8).
  static Tensor from_float(const Tensor& x, ScalarType dtype = ScalarType::Float8_e4m3fn, bool requires_grad = false);
  // A ScaledTensor over `data` (float8_e4m3fn or int8) and `scale` (a one-element float32 tensor).
  static Tensor wrap(Tensor data, Tensor scale, bool requires_grad = false);
  // The ScaledTensor behind `t`, or null when `t` is not one.
  static const ScaledTensor* of(const Tensor& t);
  // t's float32 value (data / scale); a plain tensor as it is.
  static Tensor to_float(const Tensor& t);

  const Tensor& data() const { return data_; }
  const Tensor& scale() const { return scale_; }
  Tensor to_float() const;

  std::string_view type_name() const override { return "ScaledTensor"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor& self) const override;  // {"_data", "_scale"}
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "ScaledTensor(data=tensor(...), scale=tensor(...))"

 private:
  ScaledTensor(Tensor data, Tensor scale) : data_(std::move(data)), scale_(std::move(scale)) {}
  Tensor data_;
  Tensor scale_;
};

}  // namespace strata::tracer
