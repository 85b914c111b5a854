// tracer/fake_tensor.cpp: validating, unwrapping, running meta functions and rewrapping (Note [Fake
// tensors are wrappers around meta tensors], Note [What may meet a fake tensor]).
#include "tracer/fake_tensor.h"

#include <atomic>
#include <optional>
#include <sstream>
#include <typeinfo>

#include "autograd/variable.h"
#include "core/subclass.h"
#include "core/tensor_impl.h"

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

// Upstream's _find_common_device over the fake arguments: a cpu 0-d fake defers to any other device.
class CommonDevice {
 public:
  void merge(const OperatorHandle& op, const FakeTensor& f, const Tensor& t) {
    const bool zero_dim_cpu = f.fake_device() == Device::CPU && t.dim() == 0;
    if (!device_) {
      device_ = f.fake_device(), cpu_zero_dim_ = zero_dim_cpu;
      return;
    }
    if (f.fake_device() == *device_) {
      cpu_zero_dim_ = cpu_zero_dim_ && zero_dim_cpu;
      return;
    }
    if (zero_dim_cpu) return;
    if (cpu_zero_dim_) {
      device_ = f.fake_device(), cpu_zero_dim_ = false;
      return;
    }
    STRATA_CHECK(false, "Unhandled FakeTensor Device Propagation for ", op.str(), ", found two different devices ",
                 *device_, ", ", f.fake_device());
  }
  Device get() const { return device_.value_or(Device::CPU); }  // scalar-only inputs give cpu

 private:
  std::optional<Device> device_;
  bool cpu_zero_dim_ = false;
};

std::uint64_t next_mode_id() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

Tensor meta_like(const Tensor& real) {
  return Tensor(IntrusivePtr<TensorImpl>::make(Storage(), real.storage_offset(), DimVector(real.sizes()),
                                               DimVector(real.strides()), real.dtype(), Device::Meta));
}

Tensor make_fake(const Owner& owner, Tensor meta, Device device) { return FakeTensor::make(owner, std::move(meta), device); }

// Note [A fake's argument slots borrow its elem]
// Every op under the mode unwraps its fake arguments, and copying each elem into its stack slot would
// cost two atomic reference-count updates per argument, plus two for the fake. Instead the fake moves
// out of its slot into run_fake's `fakes` (a move when the stack owned it), and the slot borrows the
// fake's elem (Note [Borrowed tensor arguments]); likewise a meta result moves into its new fake.
// Invariant: `fakes` outlives every read of a borrowed slot. The kernel reads its arguments and
// replaces them with owned returns before run_fake ends; if it throws, run_fake first gives each slot
// that still borrows an elem its own reference, so a mode above that catches the error may read the
// arguments after `fakes` (and perhaps the only reference to a fake) is gone.
//
// The mode's __torch_dispatch__, shared by the mode and by FakeTensor.__torch_dispatch__ (`mode` is
// null there: real inputs are then converted without the mode's memo).
void run_fake(const Owner& owner, FakeTensorMode* mode, const OperatorHandle& op, Stack& stack) {
  const OperatorEntry& entry = op.entry();
  const std::size_t base = stack.size() - entry.num_arguments();
  // Validate before anything changes, so an error shows the call as it was made.
  bool any_real = false;
  for (std::uint8_t i : entry.tensor_arguments()) {
    bool other_subclass = false;
    auto check = [&](const Tensor& t) {
      if (!t.defined()) return;
      if (const FakeTensor* f = FakeTensor::of(t)) {
        STRATA_CHECK(f->owned_by(owner), "Mixing fake modes NYI (", op.str(), ")");
      } else if (t.subclass()) {
        other_subclass = true;
      } else if (!is_wrapped_number(t)) {
        any_real = true;
      }
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
  STRATA_CHECK(!any_real || owner.options.allow_non_fake_inputs,
               "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
               "'allow_non_fake_inputs'. Found in ", render_call(op, stack, base));

  // Unwrap: devices to meta, fakes to their meta elems (Note [A fake's argument slots borrow its
  // elem]), real inputs converted. `fakes` also finds aliasing returns and the common device.
  std::optional<Device> requested;
  for (std::uint8_t i : entry.device_arguments()) {
    IValue& v = stack[base + i];
    if (!v.is_none()) requested = v.to_device();
    v = IValue(Device::Meta);
  }
  const bool has_device_arg = !entry.device_arguments().empty();
  struct Unwrapped {
    std::size_t slot;  // the stack slot that borrows the elem, or npos for a tensor-list element
    const TensorImpl* elem;
    const FakeTensor* payload;
    Tensor fake;
  };
  SmallVector<Unwrapped, 4> fakes;
  auto to_fake = [&](const Tensor& t) { return mode ? mode->from_tensor(t) : make_fake(owner, meta_like(t), t.device()); };
  for (std::uint8_t i : entry.tensor_arguments()) {
    IValue& v = stack[base + i];
    if (v.is_tensor()) {
      const Tensor& t = std::as_const(v).to_tensor();
      if (!t.defined() || is_wrapped_number(t)) continue;
      Tensor fake = FakeTensor::of(t) ? std::move(v).to_tensor() : to_fake(t);
      const FakeTensor* payload = FakeTensor::of(fake);
      v = IValue(IValue::Borrow{}, payload->elem());
      fakes.push_back(Unwrapped{base + i, payload->elem().impl(), payload, std::move(fake)});
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.to_tensor_list()) {
        if (!t.defined() || is_wrapped_number(t)) continue;
        if (!FakeTensor::of(t)) t = to_fake(t);
        const FakeTensor* payload = FakeTensor::of(t);
        fakes.push_back(Unwrapped{std::string::npos, payload->elem().impl(), payload, t});
        t = payload->elem();
      }
    }
  }
  const bool runs_meta = has_device_arg || !fakes.empty();
  STRATA_CHECK(!runs_meta || op.entry().resolved(DispatchKey::Meta), op.str(),
               " has no Meta kernel, so it cannot run on fake tensors (FakeTensorMode runs only meta functions; "
               "register a Meta kernel for it)");
  try {
    call_below_python(op, stack);  // upstream's in_kernel_invocation: only the meta kernels run
  } catch (...) {
    // Note [A fake's argument slots borrow its elem]: a slot still borrowing an elem takes a reference.
    for (const Unwrapped& u : fakes)
      if (u.slot < stack.size() && stack[u.slot].is_tensor() && stack[u.slot].is_borrowed() &&
          std::as_const(stack[u.slot]).to_tensor().impl() == u.elem)
        (void)stack[u.slot].to_tensor();
    throw;
  }

  // The device of new results, found only when there is one (copy_ may mix devices and returns self).
  std::optional<Device> out_device = requested;
  auto device = [&] {
    if (!out_device) {
      CommonDevice common;
      for (const Unwrapped& u : fakes) common.merge(op, *u.payload, u.fake);
      out_device = common.get();
    }
    return *out_device;
  };
  for_each_return_tensor(op, stack, [&](Tensor& t) {
    if (!t.defined() || !t.is_meta()) return;
    for (const Unwrapped& u : fakes)
      if (u.elem == t.impl()) {
        t = u.fake;  // an in-place or aliasing return is the argument itself
        return;
      }
    t = make_fake(owner, std::move(t), device());  // the meta result moves into its fake
  });
}

}  // namespace

Tensor FakeTensor::make(const Owner& owner, Tensor meta, Device device) {
  STRATA_INTERNAL_ASSERT(meta.is_meta() && !meta.subclass(), "a fake tensor wraps a plain meta tensor");
  auto* payload = new FakeTensor(owner, std::move(meta), device);
  return make_wrapper_tensor_like(IntrusivePtr<TensorSubclass>::adopt(payload), payload->elem_, device);
}

// FakeTensor is final: comparing the type is exact, and cheaper than dynamic_cast on every argument.
const FakeTensor* FakeTensor::of(const Tensor& t) {
  const TensorSubclass* s = t.defined() ? t.subclass() : nullptr;
  return s && typeid(*s) == typeid(FakeTensor) ? static_cast<const FakeTensor*>(s) : nullptr;
}

bool FakeTensor::belongs_to(const FakeTensorMode& mode) const { return owned_by(mode.owner_); }

// owner_ outlives the op even when the op replaces the stack slot that held the last tensor over this
// payload: the interposer holds a reference to each subclass whose handler it runs.
void FakeTensor::dispatch(const OperatorHandle& op, Stack& stack) { run_fake(owner_, nullptr, op, stack); }

FlattenedTensor FakeTensor::flatten() const {
  return FlattenedTensor{{"elem"}, {elem_}, std::make_shared<std::pair<Owner, Device>>(owner_, fake_device_)};
}

Tensor FakeTensor::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 1 && flat.inner[0].is_meta(),
               "FakeTensor unflattens from one meta tensor, got ", flat.inner.size(), " tensors");
  const auto& ctx = *std::static_pointer_cast<const std::pair<Owner, Device>>(flat.context);
  return make_fake(ctx.first, flat.inner[0], ctx.second);
}

std::string FakeTensor::repr(const Tensor& self) const {
  std::string out = "FakeTensor(..., " + size_tuple(self.sizes());
  if (self.dtype() != ScalarType::Float32) out += ", dtype=torch." + std::string(dtype_name(self.dtype()));
  if (self.requires_grad()) out += ", requires_grad=True";
  return out + ")";
}

FakeTensorMode::FakeTensorMode(FakeTensorModeOptions options)
    : owner_{next_mode_id(), options} {}

FakeTensorMode::~FakeTensorMode() = default;

const FakeTensorModeOptions& FakeTensorMode::options() const { return owner_.options; }

void FakeTensorMode::dispatch(const OperatorHandle& op, Stack& stack) { run_fake(owner_, this, op, stack); }

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
  Tensor fake = from_meta_and_device(meta_like(real), real.device());
  if (real.requires_grad()) requires_grad_(fake);
  memo_.emplace(real.impl(), std::make_pair(real, fake));
  return fake;
}

Tensor FakeTensorMode::from_meta_and_device(const Tensor& meta, Device device) const {
  STRATA_CHECK(meta.defined() && meta.is_meta() && !meta.subclass(), "from_meta_and_device: tensor's device must be "
               "`meta`, got ", meta.defined() ? device_name(meta.device()) : "an undefined Tensor", " instead");
  return make_fake(owner_, meta, device);
}

}  // namespace strata::tracer
