// modes/fake_tensor.cpp: validating an op's inputs, running its meta function on the fakes and
// making its results fakes (Note [A fake tensor is a meta tensor that reports its device], Note [What
// may meet a fake tensor]).
#include "modes/fake_tensor.h"

#include <atomic>
#include <optional>
#include <sstream>
#include <typeinfo>
#include <utility>

#include "autograd/variable.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "core/interpose/subclass.h"
#include "core/tensor_impl.h"
#include "ops/op_table.h"

namespace strata::tracer {

namespace {

using Owner = FakeTensor::Owner;

bool is_wrapped_number(const Tensor& t) { return !t.subclass() && t.impl()->is_wrapped_number(); }

std::string size_tuple(IntArrayRef sizes) {
  std::string out = "size=(";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + (sizes.size() == 1 ? ",)" : ")");
}

// A call as upstream's render_call shows it, with tensors summarised (threshold=0).
std::string render_tensor(const Tensor& t) {
  if (!t.defined()) return "None";
  if (t.subclass()) return t.subclass()->repr(t);
  return "tensor(..., " + size_tuple(t.sizes()) + (t.is_meta() ? ", device='meta'" : "") + ")";
}
std::string render_value(const IValue& v) {
  if (v.is_tensor()) return render_tensor(v.to_tensor());
  if (v.is_tensor_list()) {
    std::string out = "[";
    for (const Tensor& t : v.to_tensor_list()) out += (out.size() > 1 ? ", " : "") + render_tensor(t);
    return out + "]";
  }
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.to_bool() ? "True" : "False";
  if (v.is_int() || v.is_double()) {
    std::ostringstream out;
    out << v.to_scalar();
    return out.str();
  }
  return std::string(v.tag_name());
}
std::string render_call(const OperatorHandle& op, const Stack& stack, std::size_t base) {
  std::string out = op.str() + "(";
  for (std::size_t i = base; i < stack.size(); ++i) out += (i > base ? ", " : "") + render_value(stack[i]);
  return out + ")";
}

// Upstream's _find_common_device, folded over the tensor arguments in order as run_fake checks them:
// a cpu 0-d tensor defers to any other device. Two other devices are an error, raised only when a
// new result needs a device (copy_ may mix devices: it returns its self).
class CommonDevice {
 public:
  void add(const Tensor& t) {
    const Device d = t.device();
    const bool cpu_zero_dim = d == Device::CPU && t.dim() == 0;
    if (!common_) {
      common_ = d, cpu_zero_dim_ = cpu_zero_dim;
    } else if (d == *common_) {
      cpu_zero_dim_ = cpu_zero_dim_ && cpu_zero_dim;
    } else if (cpu_zero_dim || conflict_) {
      return;
    } else if (cpu_zero_dim_) {
      common_ = d, cpu_zero_dim_ = false;
    } else {
      conflict_ = d;
    }
  }
  bool empty() const { return !common_; }
  Device get(const OperatorHandle& op) const {
    STRATA_CHECK(!conflict_, "Unhandled FakeTensor Device Propagation for ", op.str(), ", found two different devices ",
                 *common_, ", ", *conflict_);
    return common_.value_or(Device::CPU);  // scalar-only inputs give cpu
  }

 private:
  std::optional<Device> common_, conflict_;
  bool cpu_zero_dim_ = false;
};

std::uint64_t next_mode_id() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// A plain meta tensor with `real`'s geometry and dtype, over a meta storage of its own.
Tensor meta_like(const Tensor& real) {
  void* unused = nullptr;
  return Tensor(IntrusivePtr<TensorImpl>::make(StorageImpl::allocate_without_data(0, &unused), real.storage_offset(),
                                               real.sizes(), real.strides(), real.dtype(),
                                               Device::Meta));
}

// Makes `meta` (a plain tensor whose kernels are the meta functions) a fake: in place when nothing
// else holds it (a kernel's fresh result), else an alias of it.
void become_fake(Tensor& meta, const IntrusivePtr<FakeTensor>& payload, Device device) {
  if (meta.use_count() != 1) [[unlikely]] meta = strata::detail::make_alias(meta);
  meta.impl()->set_subclass(IntrusivePtr<TensorSubclass>(payload.get()));
  meta.impl()->set_reported_device(device);
}

// The mode's __torch_dispatch__, shared by the mode and by FakeTensor.__torch_dispatch__ (`mode` is
// null there: real inputs are then converted without the mode's memo). Note [A fake tensor is a meta
// tensor that reports its device].
void run_fake(const IntrusivePtr<FakeTensor>& payload, FakeTensorMode* mode, const OperatorHandle& op, Stack& stack) {
  const Owner& owner = payload->owner();
  const OperatorEntry& entry = op.entry();
  const std::size_t base = stack.size() - entry.num_arguments();
  // Validate before anything changes, so an error shows the call as it was made, and fold each
  // tensor argument's device into the device of new results.
  bool any_real = false;
  CommonDevice devices;
  for (std::uint8_t i : entry.tensor_arguments()) {
    bool other_subclass = false;
    auto check = [&](const Tensor& t) {
      if (t.subclass() == payload.get()) [[likely]] {  // a fake of this mode (an undefined tensor has none)
        devices.add(t);
        return;
      }
      if (!t.defined()) return;
      if (const FakeTensor* f = FakeTensor::of(t)) {
        STRATA_CHECK(f->owned_by(owner), "Mixing fake modes NYI (", op.str(), ")");
      } else if (t.subclass()) {
        other_subclass = true;
        return;
      } else if (is_wrapped_number(t)) {
        return;
      } else {
        any_real = true;
      }
      devices.add(t);
    };
    const IValue& v = stack[base + i];
    if (v.is_tensor()) check(v.to_tensor());
    else if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) check(t);
    if (other_subclass) {  // upstream returns NotImplemented for subclasses it does not know
      return_not_implemented();
      return;
    }
  }
  if (any_real) [[unlikely]] {
    // Upstream's `lift_fns` branch: tensor(values) hands its fresh constant to lift_fresh, which the
    // mode answers with a fake of it whatever allow_non_fake_inputs says (Note [A tensor from values
    // is lifted], ops/tensor_literal.h). Not kept in the memo: nothing else will ever hold the constant.
    static const OperatorHandle lift_fresh = ops::op("aten::lift_fresh");
    if (op == lift_fresh) {
      const Tensor& real = std::as_const(stack.back()).to_tensor();
      Tensor fake = FakeTensor::make(payload, meta_like(real), real.device());
      if (real.requires_grad()) requires_grad_(fake);
      stack.back() = IValue(std::move(fake));
      return;
    }
    STRATA_CHECK(owner.options.allow_non_fake_inputs,
                 "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
                 "'allow_non_fake_inputs'. Found in ", render_call(op, stack, base));
    auto to_fake = [&](Tensor& t) {
      if (t.defined() && !t.subclass() && !is_wrapped_number(t))
        t = mode ? mode->from_tensor(t) : FakeTensor::make(payload, meta_like(t), t.device());
    };
    for_each_argument_tensor(op, stack, to_fake);
  }
  // A call without tensors (a factory) takes its backend from its device argument, which therefore
  // becomes meta; with tensors, their Meta keys choose the meta functions, and a device argument
  // keeps the value a like-factory compares with its input's device.
  std::optional<Device> requested;
  for (std::uint8_t i : entry.device_arguments()) {
    IValue& v = stack[base + i];
    if (!v.is_none()) requested = v.to_device();
    if (devices.empty()) v = IValue(Device::Meta);
  }
  const bool runs_meta = !devices.empty() || !entry.device_arguments().empty();
  STRATA_CHECK(!runs_meta || entry.resolved(DispatchKey::Meta), op.str(),
               " has no Meta kernel, so it cannot run on fake tensors (FakeTensorMode runs only meta functions; "
               "register a Meta kernel for it)");
  // Upstream's in_kernel_invocation: the meta function runs with the Python key excluded, so no mode
  // sees the inner call. The call's keys were read and its arguments checked when it was dispatched,
  // and fakes carry the Meta key, so it goes straight to the Meta kernel.
  if (runs_meta) {
    const ExcludeKeyGuard in_kernel(DispatchKey::Python);
    Dispatcher::redispatch(op, DispatchKeySet(DispatchKey::Meta), stack);
  } else {
    call_below_python(op, stack);  // numbers alone: the CPU kernel
  }

  // A return with a payload is an argument (in place or aliasing). The others, fresh meta tensors and
  // views of fakes, become fakes; a result without the Meta key is real: right for an op on numbers
  // alone, an error from a Meta kernel (one that allocated on its input's device(), which a fake
  // reports as its fake device; upstream's fake reads as meta inside a kernel).
  std::optional<Device> out_device = requested;
  for_each_return_tensor(op, stack, [&](Tensor& t) {
    if (!t.defined() || t.subclass()) return;
    if (!t.key_set().has(DispatchKey::Meta)) {
      STRATA_CHECK(!runs_meta, "the Meta kernel of ", op.str(), " returned a ", t.device(), " tensor with data; under "
                   "FakeTensorMode a Meta kernel must make its results on the meta device (a fake's device() is the "
                   "device it stands for, not meta)");
      return;
    }
    if (!out_device) out_device = devices.get(op);
    become_fake(t, payload, *out_device);
  });
}

}  // namespace

IntrusivePtr<FakeTensor> FakeTensor::make_payload(const Owner& owner) {
  register_interposer();  // ops on fakes reach the mode or FakeTensor.__torch_dispatch__ through it
  return IntrusivePtr<FakeTensor>::adopt(new FakeTensor(owner));
}

Tensor FakeTensor::make(const IntrusivePtr<FakeTensor>& payload, Tensor meta, Device device) {
  STRATA_CHECK(meta.defined() && meta.key_set().has(DispatchKey::Meta) && !meta.subclass(),
               "FakeTensor::make: a fake tensor is made from a plain meta tensor");
  become_fake(meta, payload, device);
  return meta;
}

Tensor FakeTensor::meta_of(const Tensor& fake) {
  STRATA_CHECK(is_fake(fake), "FakeTensor::meta_of expects a fake tensor");
  Tensor meta = strata::detail::make_alias(fake);
  meta.impl()->set_subclass(nullptr);
  meta.impl()->set_reported_device(Device::Meta);
  return meta;
}

// FakeTensor is final: comparing the type is exact, and cheaper than dynamic_cast on every argument.
const FakeTensor* FakeTensor::of(const Tensor& t) {
  const TensorSubclass* s = t.defined() ? t.subclass() : nullptr;
  return s && typeid(*s) == typeid(FakeTensor) ? static_cast<const FakeTensor*>(s) : nullptr;
}

bool FakeTensor::belongs_to(const FakeTensorMode& mode) const { return owned_by(mode.payload_->owner()); }

// The interposer holds a reference to each subclass whose handler it runs, so `this` outlives the op
// even when the op replaces the stack slot that held the last fake over it.
void FakeTensor::dispatch(const OperatorHandle& op, Stack& stack) {
  run_fake(IntrusivePtr<FakeTensor>(const_cast<FakeTensor*>(this)), nullptr, op, stack);
}

FlattenedTensor FakeTensor::flatten(const Tensor& self) const {
  return FlattenedTensor{{"elem"}, {meta_of(self)}, std::make_shared<std::pair<Owner, Device>>(owner_, self.device())};
}

Tensor FakeTensor::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 1 && flat.inner[0].is_meta() && !flat.inner[0].subclass() && flat.context,
               "FakeTensor unflattens from one meta tensor and the context FakeTensor::flatten gave, got ",
               flat.inner.size(), " tensors", flat.context ? "" : " and no context");
  const auto& ctx = *std::static_pointer_cast<const std::pair<Owner, Device>>(flat.context);
  return make(make_payload(ctx.first), flat.inner[0], ctx.second);
}

std::string FakeTensor::repr(const Tensor& self) const {
  std::string out = "FakeTensor(..., " + size_tuple(self.sizes());
  if (self.dtype() != ScalarType::Float32) out += ", dtype=torch." + std::string(dtype_name(self.dtype()));
  if (self.requires_grad()) out += ", requires_grad=True";
  return out + ")";
}

FakeTensorMode::FakeTensorMode(FakeTensorModeOptions options)
    : payload_(FakeTensor::make_payload({next_mode_id(), options})) {}

const FakeTensorModeOptions& FakeTensorMode::options() const { return payload_->owner().options; }

void FakeTensorMode::dispatch(const OperatorHandle& op, Stack& stack) { run_fake(payload_, this, op, stack); }

Tensor FakeTensorMode::from_tensor(const Tensor& real) {
  STRATA_CHECK(real.defined(), "from_tensor: expected a defined tensor, got an undefined Tensor");
  if (const FakeTensor* f = FakeTensor::of(real)) {
    STRATA_CHECK(f->belongs_to(*this), "Mixing fake modes NYI (from_tensor of another mode's fake)");
    return real;
  }
  STRATA_CHECK(!real.subclass(), "from_tensor: cannot fake a ", real.subclass()->type_name(), " tensor");
  STRATA_CHECK(!real.is_meta(), "from_tensor: expected a real tensor, got a meta tensor (a fake tensor on the meta "
                                "device is refused, as upstream's fake_tensor_allow_meta=False does)");
  if (auto it = memo_.find(real.impl()); it != memo_.end()) return it->second.second;
  Tensor fake = FakeTensor::make(payload_, meta_like(real), real.device());
  if (real.requires_grad()) requires_grad_(fake);
  memo_.emplace(real.impl(), std::make_pair(real, fake));
  return fake;
}

Tensor FakeTensorMode::from_meta_and_device(const Tensor& meta, Device device) const {
  STRATA_CHECK(meta.defined() && meta.is_meta() && !meta.subclass(), "from_meta_and_device: tensor's device must be "
               "`meta`, got ", meta.defined() ? device_name(meta.device()) : "an undefined Tensor", " instead");
  return FakeTensor::make(payload_, meta, device);
}

}  // namespace strata::tracer
