// tests/fuzz/api_subjects.cpp: AliasingWrapper's handler and KeepingMode.
#include "tests/fuzz/api_subjects.h"

namespace strata::fuzz {

bool is_view_op(const OperatorHandle& op) {
  const auto& returns = op.schema().returns();
  return !returns.empty() && !returns[0].type.alias.empty() && !returns[0].type.is_write();
}

Tensor AliasingWrapper::wrap(const Tensor& elem) {
  STRATA_CHECK(elem.defined() && !elem.subclass(), "AliasingWrapper wraps a plain, defined tensor");
  return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new AliasingWrapper(elem)), elem.sizes(), elem.strides(),
                             elem.storage_offset(), elem.dtype(), elem.device());
}

Tensor AliasingWrapper::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 1, "AliasingWrapper unflattens from one inner tensor, got ", flat.inner.size());
  return wrap(flat.inner[0]);
}

void AliasingWrapper::dispatch(const OperatorHandle& op, Stack& stack) {
  if (is_view_op(op)) {
    ExcludeKeyGuard below(DispatchKey::Python);
    op.call(stack);
    return;
  }
  const std::size_t n = op.schema().arguments().size();
  auto unwrap = [](Tensor& t) {
    if (t.defined())
      if (const auto* w = dynamic_cast<const AliasingWrapper*>(t.subclass())) t = w->elem_;
  };
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
    IValue& v = stack[i];
    if (v.is_tensor()) unwrap(v.to_tensor());
    else if (v.is_tensor_list())
      for (Tensor& t : v.to_tensor_list()) unwrap(t);
  }
  op.call(stack);
  const std::size_t r = op.schema().returns().size();
  for (std::size_t i = stack.size() - r; i < stack.size(); ++i)
    if (stack[i].is_tensor() && stack[i].to_tensor().defined() && !stack[i].to_tensor().subclass())
      stack[i] = IValue(wrap(stack[i].to_tensor()));
}

void KeepingMode::dispatch(const OperatorHandle& op, Stack& stack) {
  op.call(stack);
  const std::size_t r = op.schema().returns().size();
  for (std::size_t i = stack.size() - r; i < stack.size(); ++i) kept_.push_back(stack[i]);
}

}  // namespace strata::fuzz
