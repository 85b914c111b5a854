// modes/scaled_tensor_groups.cpp: ScaledTensor's grouped int8 form (Note [ScaledTensor groups]): making
// and wrapping it, its float value, and the handler for ops that have a grouped operand.
#include <utility>

#include "core/dispatch/local_dispatch_keys.h"
#include "modes/scaled_groups.h"
#include "modes/scaled_tensor.h"
#include "ops/functions.h"

namespace strata::tracer {

namespace {

// What flatten() keeps beside the two inner tensors, so that unflatten() rebuilds the same form.
struct GroupLayout {
  std::int64_t group_size;
  int group_dim;
};

const ScaledTensor* grouped_of(const IValue& v) {
  if (!v.is_tensor()) return nullptr;
  const ScaledTensor* s = ScaledTensor::of(v.to_tensor());
  return s && s->grouped() ? s : nullptr;
}

// mm's right operand in the form the product reads: grouped along its rows (dim 0) and a plain
// float32 matrix on the left.
bool runs_grouped_mm(const IValue& a, const IValue& b) {
  const ScaledTensor* sb = grouped_of(b);
  if (!sb || sb->group_dim() != 0 || !a.is_tensor()) return false;
  const Tensor& x = a.to_tensor();
  return x.defined() && !x.subclass() && x.dim() == 2 && x.dtype() == ScalarType::Float32;
}

Tensor grouped_mm(const Tensor& x, const ScaledTensor& w) {
  // w is W^T: its data and scales transposed back are W [m, k] and its scales [m, k / group].
  return scaled_groups::matmul(x, t(w.data()), t(w.scale()), w.group_size());
}

}  // namespace

Tensor ScaledTensor::from_float_grouped(const Tensor& x, std::int64_t group_size) {
  scaled_groups::Quantized q;
  {
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    q = scaled_groups::quantize_weights(x, group_size);
  }
  return wrap_grouped(std::move(q.data), std::move(q.scales), group_size, 1);
}

Tensor ScaledTensor::wrap_grouped(Tensor data, Tensor scales, std::int64_t group_size, int group_dim) {
  STRATA_CHECK(data.defined() && !data.subclass() && data.dtype() == ScalarType::Int8 && data.dim() == 2,
               "ScaledTensor: grouped data must be a plain 2-D int8 tensor");
  STRATA_CHECK(group_dim == 0 || group_dim == 1, "ScaledTensor: the group dimension must be 0 or 1, got ", group_dim);
  STRATA_CHECK(group_size >= 1 && data.sizes()[group_dim] % group_size == 0, "ScaledTensor: dimension ", group_dim,
               " of size ", data.sizes()[group_dim], " is not a whole number of groups of ", group_size);
  const std::int64_t rows = group_dim == 0 ? data.sizes()[0] / group_size : data.sizes()[0];
  const std::int64_t cols = group_dim == 1 ? data.sizes()[1] / group_size : data.sizes()[1];
  STRATA_CHECK(scales.defined() && !scales.subclass() && scales.dtype() == ScalarType::Float32 && scales.dim() == 2 &&
                   scales.sizes()[0] == rows && scales.sizes()[1] == cols && scales.device() == data.device(),
               "ScaledTensor: the scales of int8 [", data.sizes()[0], ", ", data.sizes()[1], "] in groups of ", group_size,
               " along dim ", group_dim, " must be a plain float32 [", rows, ", ", cols, "] on the data's device");
  const Tensor outer_like = data;
  IntrusivePtr<TensorSubclass> payload(new ScaledTensor(std::move(data), std::move(scales), group_size, group_dim));
  return make_wrapper_tensor(std::move(payload), outer_like.sizes(), outer_like.strides(), outer_like.storage_offset(),
                             ScalarType::Float32, outer_like.device());
}

Tensor ScaledTensor::grouped_to_float() const {
  const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
  if (group_dim_ == 1) return scaled_groups::dequantize(data_, scale_, group_size_);
  return t(scaled_groups::dequantize(t(data_), t(scale_), group_size_));
}

void ScaledTensor::dispatch_grouped(const OperatorHandle& op, Stack& stack) {
  const OperatorName& name = op.name();
  const std::size_t n = op.schema().arguments().size();
  IValue* args = stack.data() + stack.size() - n;
  const bool aten = name.ns == "aten";
  if (aten && name.name == "mm" && runs_grouped_mm(args[0], args[1])) {
    replace_arguments(stack, n, grouped_mm(args[0].to_tensor(), *grouped_of(args[1])));
    return;
  }
  if (aten && name.name == "addmm" && runs_grouped_mm(args[1], args[2]) && args[3].to_scalar().equals(1) &&
      args[4].to_scalar().equals(1)) {
    const Tensor product = grouped_mm(args[1].to_tensor(), *grouped_of(args[2]));
    replace_arguments(stack, n, add(to_float(args[0].to_tensor()), product));
    return;
  }
  if (aten && name.name == "embedding" && grouped_of(args[0]) && grouped_of(args[0])->group_dim() == 1 &&
      !ScaledTensor::of(args[1].to_tensor())) {
    const ScaledTensor& w = *grouped_of(args[0]);
    replace_arguments(stack, n, scaled_groups::embedding(w.data(), w.scale(), w.group_size(), args[1].to_tensor()));
    return;
  }
  const ScaledTensor* self = grouped_of(args[0]);
  if (aten && self && (name.name == "t" || name.name == "transpose")) {
    bool swap = true;
    if (name.name == "transpose") {
      const std::int64_t d0 = args[1].to_int(), d1 = args[2].to_int();
      STRATA_CHECK(d0 >= -2 && d0 < 2 && d1 >= -2 && d1 < 2, "ScaledTensor: transpose(", d0, ", ", d1,
                   ") of a matrix: dimensions must be in [-2, 1]");
      swap = (d0 + 2) % 2 != (d1 + 2) % 2;
    }
    replace_arguments(stack, n, swap ? wrap_grouped(t(self->data_), t(self->scale_), self->group_size_, 1 - self->group_dim_)
                              : wrap_grouped(self->data_, self->scale_, self->group_size_, self->group_dim_));
    return;
  }
  if (aten && self && (name.name == "detach" || name.name == "clone")) {
    const bool copy = name.name == "clone";
    replace_arguments(stack, n, wrap_grouped(copy ? clone(self->data_) : self->data_, copy ? clone(self->scale_) : self->scale_,
                                      self->group_size_, self->group_dim_));
    return;
  }
  if (aten && self && name.name == "add_" && name.overload == "Tensor") {
    Tensor target = args[0].to_tensor();
    auto* payload = const_cast<ScaledTensor*>(self);
    const Tensor other = to_float(args[1].to_tensor());
    Tensor updated = add(payload->grouped_to_float(), other, args[2].to_scalar());
    if (payload->group_dim_ == 0) updated = t(updated);
    scaled_groups::Quantized q = scaled_groups::quantize_weights(updated, payload->group_size_);
    payload->data_ = payload->group_dim_ == 0 ? t(q.data) : std::move(q.data);
    payload->scale_ = payload->group_dim_ == 0 ? t(q.scales) : std::move(q.scales);
    replace_arguments(stack, n, std::move(target));
    return;
  }
  run_on_float_values(op, stack);
}

std::shared_ptr<const void> ScaledTensor::group_context() const {
  return grouped() ? std::make_shared<const GroupLayout>(GroupLayout{group_size_, group_dim_}) : nullptr;
}

Tensor ScaledTensor::unflatten_grouped(const FlattenedTensor& flat) {
  const auto* layout = static_cast<const GroupLayout*>(flat.context.get());
  return wrap_grouped(flat.inner[0], flat.inner[1], layout->group_size, layout->group_dim);
}

bool ScaledTensor::has_grouped_argument(const OperatorHandle& op, const Stack& stack) {
  const std::size_t n = op.schema().arguments().size();
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i)
    if (grouped_of(stack[i])) return true;
  return false;
}

}  // namespace strata::tracer
