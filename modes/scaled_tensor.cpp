// modes/scaled_tensor.cpp: dynamic scaling, and the handler that maps mm/addmm to _scaled_mm
// (Note [ScaledTensor]).
#include "modes/scaled_tensor.h"

#include <algorithm>
#include <cmath>

#include "autograd/graph.h"
#include "autograd/variable.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "ops/functions.h"

namespace strata::tracer {

namespace {

constexpr double kAmaxEps = 1e-12;  // torchao's EPS

double max_representable(ScalarType t) { return t == ScalarType::Int8 ? 127.0 : kFloat8E4M3Max; }

struct Scaled {
  Tensor data;
  Tensor scale;
};

Scaled quantize(const Tensor& x, ScalarType dtype) {
  STRATA_CHECK(dtype == ScalarType::Float8_e4m3fn || dtype == ScalarType::Int8,
               "ScaledTensor: the data dtype must be float8_e4m3fn or int8, got ", dtype);
  STRATA_CHECK(x.defined() && !x.subclass() && x.device() == Device::CPU &&
                   (x.dtype() == ScalarType::Float32 || x.dtype() == ScalarType::Float64),
               "ScaledTensor: dynamic scaling needs a plain float32 or float64 CPU tensor, got ",
               x.defined() ? std::string(dtype_name(x.dtype())) : std::string("an undefined tensor"));
  const Tensor x32 = x.dtype() == ScalarType::Float32 ? x : x.to(ScalarType::Float32);
  const std::vector<float> values = x32.to_vector<float>();
  double amax = 0;
  for (float v : values) {
    STRATA_CHECK(std::isfinite(v), "ScaledTensor: dynamic scaling of a tensor holding ", v, " (its amax has no scale)");
    amax = std::max(amax, static_cast<double>(std::abs(v)));
  }
  const auto scale = static_cast<float>(max_representable(dtype) / std::max(amax, kAmaxEps));
  Tensor scale_t = scalar_tensor(Scalar(static_cast<double>(scale)), ScalarType::Float32);
  if (dtype == ScalarType::Float8_e4m3fn) return {mul(x32, scale_t).to(dtype), std::move(scale_t)};
  std::vector<std::int8_t> q;
  q.reserve(values.size());
  for (float v : values)
    q.push_back(static_cast<std::int8_t>(std::clamp(std::nearbyint(v * scale), -127.0f, 127.0f)));
  return {tensor(q, x32.sizes()), std::move(scale_t)};
}

bool is_row_major(const Tensor& m) { return m.strides()[0] > m.strides()[1] && m.strides()[1] == 1; }

bool is_desugared(const OperatorName& name) {
  return name.ns == "aten" && (name.name == "t" || name.name == "transpose" || name.name == "view" ||
                               name.name == "_unsafe_view" || name.name == "as_strided" || name.name == "clone" ||
                               name.name == "detach");
}

// torchao's float8_mm / float8_addmm: preprocess_addmm, the reciprocals, _scaled_mm.
Tensor scaled_addmm(const Tensor& bias, const Tensor& a, const Tensor& b) {
  const ScaledTensor* sa = ScaledTensor::of(a);
  const ScaledTensor* sb = ScaledTensor::of(b);
  const ScalarType dtype = sa ? sa->data().dtype() : sb->data().dtype();
  const Scaled qa = sa ? Scaled{sa->data(), sa->scale()} : quantize(a, dtype);
  const Scaled qb = sb ? Scaled{sb->data(), sb->scale()} : quantize(b, dtype);
  STRATA_CHECK(qa.data.dim() == 2 && qb.data.dim() == 2, "ScaledTensor: mm expects matrices, got ", qa.data.dim(),
               "-D and ", qb.data.dim(), "-D");
  Tensor a_data = qa.data, b_data = qb.data;
  if (!is_row_major(a_data)) a_data = contiguous(a_data);
  if (is_row_major(b_data)) b_data = t(contiguous(t(b_data)));
  const Tensor a_inverse_scale = reciprocal(qa.scale);
  const Tensor b_inverse_scale = reciprocal(qb.scale);
  const Tensor bias_f = bias.defined() ? ScaledTensor::to_float(bias) : Tensor();
  const bool fused = bias_f.defined() && bias_f.dim() == 1 && bias_f.dtype() == ScalarType::Float32 &&
                     bias_f.sizes()[0] == b_data.sizes()[1];
  // torchao's default gemm configs: the forward's output product accumulates fast, the backward's
  // gradient products do not (use_fast_accum changes nothing in the CPU kernel; traces show it).
  const bool use_fast_accum = autograd::current_graph_task_id() < 0;
  Tensor out = _scaled_mm(a_data, b_data, a_inverse_scale, b_inverse_scale, fused ? bias_f : Tensor(), Tensor(),
                          ScalarType::Float32, use_fast_accum);
  if (bias_f.defined() && !fused) out = add(bias_f, out);
  return out;
}

}  // namespace

Tensor ScaledTensor::from_float(const Tensor& x, ScalarType dtype, bool requires_grad) {
  Scaled q;
  {
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    q = quantize(x, dtype);
  }
  return wrap(std::move(q.data), std::move(q.scale), requires_grad);
}

Tensor ScaledTensor::wrap(Tensor data, Tensor scale, bool requires_grad) {
  STRATA_CHECK(data.defined() && !data.subclass() &&
                   (data.dtype() == ScalarType::Float8_e4m3fn || data.dtype() == ScalarType::Int8),
               "ScaledTensor: data must be a plain float8_e4m3fn or int8 tensor");
  STRATA_CHECK(scale.defined() && !scale.subclass() && scale.dtype() == ScalarType::Float32 && scale.numel() == 1 &&
                   scale.device() == data.device(),
               "ScaledTensor: scale must be a one-element float32 tensor on the data's device");
  const Tensor outer_like = data;
  auto payload = IntrusivePtr<TensorSubclass>::adopt(new ScaledTensor(std::move(data), std::move(scale)));
  Tensor out = make_wrapper_tensor(std::move(payload), outer_like.sizes(), outer_like.strides(),
                                   outer_like.storage_offset(), ScalarType::Float32, outer_like.device());
  if (requires_grad) requires_grad_(out);
  return out;
}

const ScaledTensor* ScaledTensor::of(const Tensor& t) {
  return t.defined() ? dynamic_cast<const ScaledTensor*>(t.subclass()) : nullptr;
}

Tensor ScaledTensor::to_float() const {
  if (grouped()) return grouped_to_float();
  const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
  return div(data_.to(ScalarType::Float32), scale_);
}

Tensor ScaledTensor::to_float(const Tensor& t) {
  const ScaledTensor* s = of(t);
  return s ? s->to_float() : t;
}

void ScaledTensor::dispatch(const OperatorHandle& op, Stack& stack) {
  const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // as a __torch_dispatch__ runs
  if (has_grouped_argument(op, stack)) return dispatch_grouped(op, stack);
  const OperatorName& name = op.name();
  const std::size_t n = op.schema().arguments().size();
  IValue* args = stack.data() + stack.size() - n;
  if (name.ns == "aten" && name.name == "mm") {
    replace_arguments(stack, n, scaled_addmm(Tensor(), args[0].to_tensor(), args[1].to_tensor()));
    return;
  }
  if (name.ns == "aten" && name.name == "addmm") {
    const Scalar beta = args[3].to_scalar(), alpha = args[4].to_scalar();
    STRATA_CHECK(beta.equals(1) && alpha.equals(1), "ScaledTensor: addmm with beta=", beta, " and alpha=", alpha,
                 " is not supported (torchao's float8_addmm takes 1 and 1)");
    replace_arguments(stack, n, scaled_addmm(args[0].to_tensor(), args[1].to_tensor(), args[2].to_tensor()));
    return;
  }
  if (is_desugared(name) && of(args[0].to_tensor())) {
    const Tensor scale = of(args[0].to_tensor())->scale_;
    args[0] = IValue(of(args[0].to_tensor())->data_);
    op.call(stack);
    Tensor& out = stack.back().to_tensor();
    out = wrap(out, scale);
    return;
  }
  if (name.ns == "aten" && name.name == "add_" && name.overload == "Tensor" && of(args[0].to_tensor())) {
    Tensor self = args[0].to_tensor();
    auto* payload = const_cast<ScaledTensor*>(of(self));
    const Tensor other = to_float(args[1].to_tensor());  // first: Note [An op's operands are dispatched in a written order]
    const Tensor updated = add(payload->to_float(), other, args[2].to_scalar());
    Scaled q = quantize(updated, payload->data_.dtype());
    payload->data_ = std::move(q.data);
    payload->scale_ = std::move(q.scale);
    replace_arguments(stack, n, std::move(self));
    return;
  }
  run_on_float_values(op, stack);  // torchao's unwrap to original precision
}

void ScaledTensor::run_on_float_values(const OperatorHandle& op, Stack& stack) {
  const OperatorName& name = op.name();
  const std::size_t n = op.schema().arguments().size();
  IValue* args = stack.data() + stack.size() - n;
  for (std::size_t i = 0; i < n; ++i) {
    if (!args[i].is_tensor() || !of(args[i].to_tensor())) continue;
    STRATA_CHECK(!op.schema().arguments()[i].type.is_write(), "ScaledTensor: ", name.qualified(),
                 name.overload.empty() ? "" : "." + name.overload, " would write into a ScaledTensor (only add_.Tensor may)");
    args[i] = IValue(to_float(args[i].to_tensor()));
  }
  op.call(stack);
}

FlattenedTensor ScaledTensor::flatten(const Tensor&) const {
  return FlattenedTensor{{"_data", "_scale"}, {data_, scale_}, group_context()};
}

Tensor ScaledTensor::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 2, "ScaledTensor unflattens from two inner tensors (_data, _scale), got ",
               flat.inner.size());
  return flat.context ? unflatten_grouped(flat) : wrap(flat.inner[0], flat.inner[1]);
}

std::string ScaledTensor::repr(const Tensor&) const {
  const std::string groups =
      grouped() ? ", group_size=" + std::to_string(group_size_) + ", group_dim=" + std::to_string(group_dim_) : "";
  return "ScaledTensor(data=" + data_.str() + ", scale=" + scale_.str() + groups + ")";
}

}  // namespace strata::tracer
