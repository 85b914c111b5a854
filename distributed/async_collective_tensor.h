// distributed/async_collective_tensor.h: upstream's AsyncCollectiveTensor
// (torch/distributed/_functional_collectives.py): a wrapper subclass over a functional collective's
// output that waits for the collective (wait_tensor on the inner tensor) only when the data is first
// needed, so communication can overlap with what the program does meanwhile.
#pragma once

#include "../core/interpose/interposer.h"

namespace strata::distributed {

// Note [An async collective tensor waits on first use]
// As upstream's __torch_dispatch__: a view op (its first argument an alias it does not write, and not
// one of PyTorch's CompositeImplicitAutograd ops) runs on the inner tensor without waiting and wraps
// its tensor results again, so slicing off padding keeps the collective in flight; any other op first
// waits once (trigger_wait: wait_tensor on the inner tensor, then the tensor counts as completed),
// runs on the waited inner tensors and returns plain tensors. The handler runs with the mode that
// forwarded the op popped, so its wait is not seen by that mode; wait() called by a program is an
// ordinary dispatched wait_tensor, which modes see (upstream's wait() neither marks the tensor
// completed: a later non-view op waits again, which returns at once).
class AsyncCollectiveTensor final : public TensorSubclass {
 public:
  // Wraps `elem` (a plain or fake tensor, usually a collective's output) with its metadata; an error
  // for an undefined tensor or one that is an AsyncCollectiveTensor already.
  static Tensor wrap(const Tensor& elem);
  // The AsyncCollectiveTensor behind `t`, or null when `t` is not one.
  static const AsyncCollectiveTensor* of(const Tensor& t);
  // upstream's wait(): wait_tensor(elem), returned as a plain tensor.
  static Tensor wait(const Tensor& t);

  const Tensor& elem() const { return elem_; }
  bool completed() const { return completed_; }
  // upstream's trigger_wait(): waits the first time (wait_tensor on elem), then returns elem.
  Tensor trigger_wait() const;

  std::string_view type_name() const override { return "AsyncCollectiveTensor"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor& self) const override;
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "AsyncCollectiveTensor(tensor(...))", after waiting

 private:
  explicit AsyncCollectiveTensor(Tensor elem) : elem_(std::move(elem)) {}
  Tensor elem_;
  mutable bool completed_ = false;
};

// Whether `op` is a view for the wrapper (upstream's _is_view_op).
bool is_view_op(const OperatorHandle& op);

}  // namespace strata::distributed
