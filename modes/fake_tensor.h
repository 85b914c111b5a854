// modes/fake_tensor.h: PyTorch's FakeTensor and FakeTensorMode (torch/_subclasses/fake_tensor.py).
// A fake tensor has sizes, strides, dtype and a device but no data; under the mode every op runs its
// meta function and returns fakes, so a whole training step can be run, counted or measured without
// allocating a byte of tensor data.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "../core/interpose/interposer.h"
#include "../core/util/non_copyable.h"

namespace strata::tracer {

// Note [A fake tensor is a meta tensor that reports its device]
// Upstream's FakeTensor is a tensor subclass over a meta tensor whose `device` reports the device it
// stands for (`fake_device`, cpu here). strata makes it exactly that, in one TensorImpl: a meta
// tensor (Meta backend key, a meta storage that counts versions, no data) that carries the
// FakeTensor payload (which adds the Python key) and reports its fake device (Note [A meta tensor
// may report another device], core/tensor_impl.h). Reading its data is an error, as upstream's
// throw_on_mutable_data_ptr makes it. Autograd runs above the Python key on the fakes, so gradients,
// grad_fns and leaves behave as on real tensors, and every op below autograd reaches the mode, which
// runs it with the Python key excluded (upstream's in_kernel_invocation: no other mode sees the inner
// call). The fakes themselves are the kernel's arguments: their keys choose the meta functions, with
// nothing to unwrap. Each meta result then becomes a fake in place (its payload and device set), and
// an in-place or aliasing return that is an argument is that argument already, as upstream's memo
// makes it; views share their base's meta storage, so they share its version counter. The fakes a
// mode makes share its payload (unflatten makes another with the same owner). Kernels are chosen by
// keys, but a Meta kernel still sees a fake's device() as the device it stands for (upstream's fake
// reads as meta inside its kernels): a Meta kernel must make its results on the meta device, which
// the mode checks, and a CPU tensor with data mixed with a fake below the mode is refused (Note
// [Meta kernels read and write no data], ops/boxing.h). Modes entered inside the FakeTensorMode (an
// OpCounter, a FlopCounterMode) see exactly the ops a real run dispatches, with fake arguments.
//
// Why one TensorImpl rather than a wrapper around a separate meta tensor: a wrapper would cost every
// op an unwrap of each argument, and each result a second TensorImpl, a payload and a rewrap. With
// one TensorImpl a fake op costs what a dispatch mode that only calls through costs on meta tensors,
// plus the validation above.
//
// Note [What may meet a fake tensor]
// Upstream's rules: the arguments of an op under the mode must be fakes of this mode; a real tensor
// is an error ("Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with
// 'allow_non_fake_inputs'. Found in <call>") unless the mode allows non-fake inputs, when it is
// converted with from_tensor. A fake of another mode is "Mixing fake modes NYI". Python numbers
// never reach upstream's mode as tensors; strata passes them as wrapped-number 0-d tensors (SGD's
// `mul_(momentum)`), so those go through unchanged, and only they: a real 0-d tensor is a real
// tensor. A tensor(values) literal reaches the mode as aten::lift_fresh of its fresh constant, which
// the mode answers with a fake of it, as upstream's `lift_fns` branch does, allowed or not (Note [A
// tensor from values is lifted], ops/tensor_literal.h); scalar_tensor() dispatches nothing and stays
// real: use from_tensor. All fakes run
// meta functions, so fakes on two devices pass the dispatcher's device check, as upstream's do under
// in_kernel_invocation; a new result takes _find_common_device's device (a cpu 0-d fake defers to the
// other), which refuses two others in upstream's words, while copy_, which returns its self, may mix
// them. Another wrapper subclass among the arguments makes the mode return NotImplemented, as
// upstream's does, so that subclass's handler runs. Random ops run their meta functions: the
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
// options. Each mode takes a serial number from a process-wide counter, and the payload its fakes
// share keeps that number and the options by value, not the mode: the payload lives as long as a
// fake does, the mode as long as its owner wants. Numbers are never reused, so a fake of a dead mode
// is never taken for a newer mode's fake, as an address could be.
class FakeTensor final : public TensorSubclass {
 public:
  // The FakeTensor payload of `t`, or null when `t` is not a fake.
  static const FakeTensor* of(const Tensor& t);
  static bool is_fake(const Tensor& t) { return of(t) != nullptr; }
  // The meta tensor a fake is, as a plain tensor: an alias of `fake` on the meta device without the
  // payload, sharing its version counter (upstream's FakeTensor is that meta tensor, reporting
  // another device). The device a fake stands for is its device().
  static Tensor meta_of(const Tensor& fake);

  // Whether this fake belongs to `mode`.
  bool belongs_to(const FakeTensorMode& mode) const;

  std::string_view type_name() const override { return "FakeTensor"; }
  // Upstream's FakeTensor.__torch_dispatch__: an op on fakes outside the mode runs as under it.
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor& self) const override;  // {"elem"}: meta_of(self)
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "FakeTensor(..., size=(3, 4))"

  // What a fake keeps of its mode: the mode's serial number and options, by value (Note [A fake
  // keeps its mode by number]).
  struct Owner {
    std::uint64_t mode_id = 0;
    FakeTensorModeOptions options;
  };
  const Owner& owner() const { return owner_; }
  bool owned_by(const Owner& owner) const { return owner_.mode_id == owner.mode_id; }
  // A payload for `owner`'s fakes.
  static IntrusivePtr<FakeTensor> make_payload(const Owner& owner);
  // Makes `meta`, a plain tensor whose kernels are the meta functions, a fake with `payload` standing
  // for `device`; when anything else holds `meta`, an alias of it becomes the fake instead.
  static Tensor make(const IntrusivePtr<FakeTensor>& payload, Tensor meta, Device device);

 private:
  explicit FakeTensor(const Owner& owner) : owner_(owner) {}
  Owner owner_;
};

class FakeTensorMode final : public DispatchMode, NonCopyable {
 public:
  explicit FakeTensorMode(FakeTensorModeOptions options = {});

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
  IntrusivePtr<FakeTensor> payload_;  // shared by all this mode's fakes
  std::map<const TensorImpl*, std::pair<Tensor, Tensor>> memo_;  // real impl -> (real, fake)
};

}  // namespace strata::tracer
