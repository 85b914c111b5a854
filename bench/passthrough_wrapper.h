// bench/passthrough_wrapper.h: a wrapper subclass that does nothing (strata-bench's dtensor group and
// bench/callgrind/loops.cpp). Its handler unwraps the arguments, runs the op on the inner tensors
// below Autograd (as DTensor's handler does) and wraps each tensor result in a new wrapper of the
// result's geometry: what any wrapper subclass pays the interposer, with nothing of DTensor's own
// (no specs, no sharding cache), so a DTensor op's overhead splits into the two.
#pragma once

#include <string_view>
#include <utility>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/interpose/interposer.h"

namespace strata::bench {

class PassThroughWrapper final : public TensorSubclass {
 public:
  static Tensor wrap(Tensor inner) {
    auto* payload = new PassThroughWrapper(std::move(inner));
    const Tensor& t = payload->inner_;
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(payload), t.sizes(), t.strides(), 0, t.dtype(), t.device());
  }
  static const PassThroughWrapper* of(const Tensor& t) {  // as DTensor::of: by the name's address
    const TensorSubclass* s = t.defined() ? t.subclass() : nullptr;
    return s && s->type_name().data() == kTypeName ? static_cast<const PassThroughWrapper*>(s) : nullptr;
  }
  const Tensor& inner() const { return inner_; }

  std::string_view type_name() const override { return {kTypeName, sizeof(kTypeName) - 1}; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    for_each_argument_tensor(op, stack, [](Tensor& t) {
      if (const PassThroughWrapper* w = of(t)) t = w->inner_;
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [](Tensor& t) {
      if (t.defined()) t = wrap(std::move(t));
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"inner"}, {inner_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override { return wrap(flat.inner.at(0)); }

 private:
  explicit PassThroughWrapper(Tensor inner) : inner_(std::move(inner)) {}
  static constexpr char kTypeName[] = "PassThroughWrapper";
  Tensor inner_;
};

}  // namespace strata::bench
