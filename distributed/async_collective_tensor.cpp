// distributed/async_collective_tensor.cpp: wait on first use, views without waiting (Note [An async
// collective tensor waits on first use]).
#include "distributed/async_collective_tensor.h"

#include <string_view>

#include "autograd/variable.h"
#include "distributed/functional_collectives.h"

namespace strata::distributed {

bool is_view_op(const OperatorHandle& op) {
  // PyTorch's CompositeImplicitAutograd ops that strata dispatches (upstream skips them: its issue
  // 133421): their schema marks an alias, but they are no views to the wrapper.
  const std::string& qualified = op.str();
  if (qualified == "aten.chunk.default" || qualified == "aten.narrow.default") return false;
  const auto& args = op.schema().arguments();
  if (args.empty()) return false;
  const SchemaType& first = args.front().type;
  return !first.alias.empty() && !first.is_write();
}

Tensor AsyncCollectiveTensor::wrap(const Tensor& elem) {
  STRATA_CHECK(elem.defined() && of(elem) == nullptr,
               "AsyncCollectiveTensor wraps a defined tensor that is not an AsyncCollectiveTensor itself");
  IntrusivePtr<TensorSubclass> payload(new AsyncCollectiveTensor(elem));
  Tensor out = make_wrapper_tensor(std::move(payload), elem.sizes(), elem.strides(), elem.storage_offset(), elem.dtype(),
                                   elem.device());
  if (elem.requires_grad()) requires_grad_(out);
  return out;
}

const AsyncCollectiveTensor* AsyncCollectiveTensor::of(const Tensor& t) {
  return t.defined() ? dynamic_cast<const AsyncCollectiveTensor*>(t.subclass()) : nullptr;
}

Tensor AsyncCollectiveTensor::wait(const Tensor& t) {
  const AsyncCollectiveTensor* act = of(t);
  STRATA_CHECK(act != nullptr, "wait() is a method of AsyncCollectiveTensor, got a plain tensor");
  return wait_tensor(act->elem_);
}

Tensor AsyncCollectiveTensor::trigger_wait() const {
  if (completed_) return elem_;
  Tensor out = wait_tensor(elem_);
  completed_ = true;
  return out;
}

void AsyncCollectiveTensor::dispatch(const OperatorHandle& op, Stack& stack) {
  const bool view = is_view_op(op);
  for_each_argument_tensor(op, stack, [&](Tensor& t) {  // unwrap
    if (const AsyncCollectiveTensor* act = of(t)) t = view ? act->elem_ : act->trigger_wait();
  });
  op.call(stack);
  if (!view) return;  // results of other ops need no wait: plain tensors
  for_each_return_tensor(op, stack, [](Tensor& t) {
    if (t.defined()) t = wrap(t);
  });
}

FlattenedTensor AsyncCollectiveTensor::flatten(const Tensor&) const { return FlattenedTensor{{"elem"}, {elem_}, nullptr}; }

Tensor AsyncCollectiveTensor::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 1, "AsyncCollectiveTensor unflattens from one inner tensor, got ", flat.inner.size());
  return wrap(flat.inner[0]);
}

std::string AsyncCollectiveTensor::repr(const Tensor&) const { return "AsyncCollectiveTensor(" + trigger_wait().str() + ")"; }

}  // namespace strata::distributed
