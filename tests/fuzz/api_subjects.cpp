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
  if (is_view_op(op)) return call_below_python(op, stack);
  for_each_argument_tensor(op, stack, [](Tensor& t) {
    if (t.defined())
      if (const auto* w = dynamic_cast<const AliasingWrapper*>(t.subclass())) t = w->elem_;
  });
  op.call(stack);
  for_each_return_tensor(op, stack, [](Tensor& t) {
    if (t.defined() && !t.subclass()) t = wrap(t);
  });
}

void KeepingMode::dispatch(const OperatorHandle& op, Stack& stack) {
  op.call(stack);
  const std::size_t r = op.schema().returns().size();
  for (std::size_t i = stack.size() - r; i < stack.size(); ++i) kept_.push_back(stack[i]);
}

}  // namespace strata::fuzz
