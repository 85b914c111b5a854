// tracer/fake_tensor.h: PyTorch's FakeTensor and FakeTensorMode (torch/_subclasses/fake_tensor.py).
// A fake tensor has sizes, strides, dtype and a device but no data; under the mode every op runs its
// meta function and returns fakes, so a whole training step can be run, counted or measured without
// allocating a byte of tensor data.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "../core/interposer.h"

namespace strata::tracer {

// Note [Fake tensors are wrappers around meta tensors]
// Upstream's FakeTensor is a subclass whose data is a meta tensor and whose `device` reports the
// device it stands for (`fake_device`, cpu here). strata's wrapper subclasses (make_wrapper_tensor)
// fit that exactly: the wrapper carries the fake device, sizes, strides and dtype, has no storage
// (so reading its data is an error, as upstream's throw_on_mutable_data_ptr makes it), and its
// payload holds the meta tensor (`elem`). Autograd runs above the Python key on the wrappers, so
// gradients, grad_fns and leaves behave as on real tensors, and every op below autograd reaches the
// mode: it unwraps the meta elems, runs the op with the Python key excluded (upstream's
// in_kernel_invocation: only meta functions run, no other mode sees the inner call) and wraps the
// meta results. An in-place or aliasing return that is an argument's elem comes back as that
// argument's fake tensor, as upstream's memo makes it. Modes entered inside the FakeTensorMode (an
// OpCounter, a FlopCounterMode) see exactly the ops a real run dispatches, with fake arguments.
//
// Note [What may meet a fake tensor]
// Upstream's rules: the arguments of an op under the mode must be fakes of this mode; a real tensor
// is an error ("Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with
// 'allow_non_fake_inputs'. Found in <call>") unless the mode allows non-fake inputs, when it is
// converted with from_tensor. A fake of another mode is "Mixing fake modes NYI". Python numbers
// never reach upstream's mode as tensors; strata passes them as wrapped-number 0-d tensors (SGD's
// `mul_(momentum)`), so those go through unchanged, and only they: a real 0-d tensor is a real
// tensor. strata's tensor() and scalar_tensor() build real data without dispatching, so under the
// mode they stay real (upstream lifts torch.tensor to a fake constant): use from_tensor. Fakes on two
// devices meet the dispatcher's device check before the mode, as real tensors do; where an op may mix
// devices (copy_, which returns its self), a new result takes _find_common_device's answer (a cpu
// 0-d fake defers to the other device). Another wrapper subclass among the arguments makes the mode return NotImplemented,
// as upstream's does, so that subclass's handler runs. Random ops run their meta functions: the
// generator does not advance (as upstream, whose meta kernels draw nothing). An op registered without
// a Meta kernel (a Library op with only a CPU kernel) is an error naming it; upstream would run its
// CPU kernel on zero-filled real inputs (allow_fallback_kernels), which allocates the data the mode
// exists to avoid.
class FakeTensorMode;

struct FakeTensorModeOptions {
  bool allow_non_fake_inputs = false;  // convert real inputs with from_tensor instead of refusing them
};

// Note [A fake keeps its mode by number]
// A fake must know its mode after the mode is gone (upstream's fake.fake_mode keeps the mode alive):
// to refuse mixing two modes' fakes and to run an op on fakes outside the mode with the mode's
// options. Each mode takes a serial number from a process-wide counter, and a fake copies that
// number and the options: two words, no shared owner whose reference count every fake would update
// atomically when it is made and freed. Numbers are never reused, so a fake of a dead mode is never
// taken for a newer mode's fake, as an address could be.
class FakeTensor final : public TensorSubclass {
 public:
  // The FakeTensor behind `t`, or null when `t` is not one.
  static const FakeTensor* of(const Tensor& t);
  static bool is_fake(const Tensor& t) { return of(t) != nullptr; }

  const Tensor& elem() const { return elem_; }  // the meta tensor
  Device fake_device() const { return fake_device_; }
  // Whether this fake belongs to `mode`.
  bool belongs_to(const FakeTensorMode& mode) const;

  std::string_view type_name() const override { return "FakeTensor"; }
  // Upstream's FakeTensor.__torch_dispatch__: an op on fakes outside the mode runs as under it.
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten() const override;
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "FakeTensor(..., size=(3, 4))"

  // What a fake keeps of its mode: the mode's serial number and options, by value (Note [A fake
  // keeps its mode by number]).
  struct Owner {
    std::uint64_t mode_id = 0;
    FakeTensorModeOptions options;
  };
  bool owned_by(const Owner& owner) const { return owner_.mode_id == owner.mode_id; }
  // A fake tensor over `meta` standing for `device`.
  static Tensor make(const Owner& owner, Tensor meta, Device device);

 private:
  FakeTensor(const Owner& owner, Tensor elem, Device device) : owner_(owner), elem_(std::move(elem)), fake_device_(device) {}
  Owner owner_;
  Tensor elem_;
  Device fake_device_;
};

class FakeTensorMode final : public DispatchMode {
 public:
  explicit FakeTensorMode(FakeTensorModeOptions options = {});
  ~FakeTensorMode() override;
  FakeTensorMode(const FakeTensorMode&) = delete;
  FakeTensorMode& operator=(const FakeTensorMode&) = delete;

  std::string_view name() const override { return "FakeTensorMode"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;

  // Upstream's fake_mode.from_tensor(t): a fake with t's sizes, strides, offset, dtype, device and
  // requires_grad (a leaf). The same real tensor gives the same fake for the mode's lifetime.
  Tensor from_tensor(const Tensor& real);
  // A fake of this mode over a meta tensor, standing for `device` (upstream's from_meta_and_device).
  Tensor from_meta_and_device(const Tensor& meta, Device device) const;

  const FakeTensorModeOptions& options() const;

 private:
  friend class FakeTensor;
  FakeTensor::Owner owner_;
  std::map<const TensorImpl*, std::pair<Tensor, Tensor>> memo_;  // real impl -> (real, fake)
};

}  // namespace strata::tracer
