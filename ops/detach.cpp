// ops/detach.cpp: detach() and shallow_copy_and_detach (Note [Detach and the interposer]).
#include "ops/detach.h"

#include "ops/torch_function.h"

#include <utility>

#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "ops/op_table.h"

namespace strata {

namespace {
const TypedOperator<Tensor(const Tensor&)>& detach_op() {
  static const TypedOperator<Tensor(const Tensor&)> op("aten::detach");
  return op;
}
}  // namespace

// Note [The wrapping copy of a sole alias is the alias itself]
// Outside the interposer the wrapping's copy is unobservable when aten::detach returned a TensorImpl
// nobody else holds, without autograd state, subclass or wrapped-number flag (its own kernel's fresh
// alias): the copy would have the same storage, geometry and keys, and the original would die here
// unseen. So that alias is returned as is, saving an allocation and a free per detach (four an MLP training step).
Tensor detach(const Tensor& self) {
  STRATA_TORCH_FUNCTION(detach, "torch.detach", "input", self);
  return detach_op()(self);
}

namespace {
Tensor wrap_non_differentiable_view(Tensor out) {
  if (!out.defined()) return out;  // a handler's None
  const TensorImpl& impl = *out.impl();
  if (impl.use_count() == 1 && !impl.autograd_meta() && !impl.subclass() && !impl.is_wrapped_number() &&
      !interposer_sees(out))
    return out;
  return shallow_copy_and_detach(out);  // the 2.8 wrapping: dispatches detach again under the interposer
}
}  // namespace

void detach_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  // A wrapper's detach shares its version counter (Note [A wrapper's version counter]).
  const IntrusivePtr<TensorSubclass> base(std::as_const(stack.back()).to_tensor().subclass());
  {
    const ExcludeKeyGuard below(DispatchKey::Autograd);
    op.redispatch(keys.after(DispatchKey::Autograd), stack);
  }
  IValue& result = stack.back();
  Tensor out = wrap_non_differentiable_view(std::move(result).to_tensor());
  if (base && out.defined() && out.subclass()) [[unlikely]] out.subclass()->share_version_counter(*base);
  result = IValue(std::move(out));
}

Tensor shallow_copy_and_detach(const Tensor& self) {
  if (interposer_sees(self)) {
    // PyTorch's PyInterpreter::detach hands the op straight to the mode or subclass: the Python key.
    Stack stack;
    stack.emplace_back(self);
    const DispatchKeySet keys = (self.key_set() | DispatchKeySet(DispatchKey::Python)).after(DispatchKey::Autograd);
    Dispatcher::redispatch(detach_op().handle(), keys, stack);
    Tensor out = std::move(stack.back()).to_tensor();
    // PyTorch's shallow_copy_and_detach gives the copy the source's version counter.
    if (self.subclass() && out.defined() && out.subclass()) out.subclass()->share_version_counter(*self.subclass());
    return out;
  }
  Tensor out = strata::detail::make_alias(self);
  // A subclass tensor while the Python key is excluded: the copy keeps the payload (and with it a
  // wrapper's version counter), as upstream's C++ shallow copy keeps the tensor's Python object type.
  if (TensorSubclass* subclass = self.subclass()) [[unlikely]] out.impl()->set_subclass(IntrusivePtr<TensorSubclass>(subclass));
  return out;
}

}  // namespace strata
