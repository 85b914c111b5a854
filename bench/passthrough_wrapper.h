// bench/passthrough_wrapper.h: a wrapper subclass that does nothing (strata-bench's dtensor group and
// bench/callgrind/loops.cpp). Its handler runs the op on the inner tensors below Autograd (as
// DTensor's handler does, tensor lists left as they are) and wraps each tensor result in a new
// wrapper of the result's geometry: what any wrapper subclass pays the interposer, with nothing of DTensor's own
// (no specs, no sharding cache), so a DTensor op's overhead splits into the two.
#pragma once

#include <algorithm>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/interpose/interposer.h"

namespace strata::bench {

class PassThroughWrapper final : public TensorSubclass {
 public:
  static Tensor wrap(Tensor inner) {
    auto* payload = new PassThroughWrapper(std::move(inner));
    const Tensor& t = payload->inner_;
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>::adopt(payload), t.sizes(), t.strides(), 0, t.dtype(), t.device());
  }
  static const PassThroughWrapper* of(const Tensor& t) {  // as DTensor::of: by the exact type
    const TensorSubclass* s = t.subclass();
    return s && typeid(*s) == typeid(PassThroughWrapper) ? static_cast<const PassThroughWrapper*>(s) : nullptr;
  }
  const Tensor& inner() const { return inner_; }

  std::string_view type_name() const override { return {kTypeName, sizeof(kTypeName) - 1}; }
  // As DTensor's handler calls its local op (Note [The DTensor hit path]): on the caller's stack
  // when every wrapper sits in a borrowed slot (Note [The local op runs in place]), else with the
  // inner tensors borrowed on a stack of their own, the wrappers kept on `stack` until it returns.
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    const std::size_t n = op.schema().arguments().size();
    IValue* args = stack.data() + stack.size() - n;
    if (std::all_of(args, args + n, [](const IValue& v) {
          return !v.is_tensor_list() && (!v.is_tensor() || v.is_borrowed() || !of(v.to_tensor()));
        })) {
      for (IValue* v = args; v != args + n; ++v)
        if (const PassThroughWrapper* w = v->is_tensor() ? of(std::as_const(*v).to_tensor()) : nullptr) v->set_borrowed(w->inner_);
      op.call(stack);
      wrap_returns(op, stack);
      return;
    }
    Stack inner;
    for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
      const IValue& v = stack[i];
      if (const PassThroughWrapper* w = v.is_tensor() ? of(v.to_tensor()) : nullptr) inner.emplace_back(IValue::Borrow{}, w->inner_);
      else inner.push_back(v);
    }
    op.call(inner);
    stack.truncate(stack.size() - n);
    for (IValue& r : inner) stack.push_back(std::move(r));
    wrap_returns(op, stack);
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"inner"}, {inner_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override { return wrap(flat.inner.at(0)); }

 private:
  explicit PassThroughWrapper(Tensor inner) : inner_(std::move(inner)) {}
  static void wrap_returns(const OperatorHandle& op, Stack& stack) {
    for_each_return_tensor(op, stack, [](Tensor& t) {
      if (t.defined()) t = wrap(std::move(t));
    });
  }
  static constexpr char kTypeName[] = "PassThroughWrapper";
  Tensor inner_;
};

}  // namespace strata::bench
