// modes/logging_tensor.cpp: unwrap, run, log, rewrap (the dispatch-tracer experiment's __torch_dispatch__).
#include "modes/logging_tensor.h"

#include "autograd/variable.h"
#include "modes/fake_tensor.h"

namespace strata::tracer {

Tensor LoggingTensor::wrap(const Tensor& elem, std::shared_ptr<Log> log, bool requires_grad) {
  STRATA_CHECK(elem.defined() && (!elem.subclass() || FakeTensor::is_fake(elem)),
               "LoggingTensor wraps a plain or fake, defined tensor");
  auto payload = IntrusivePtr<TensorSubclass>::adopt(new LoggingTensor(elem, std::move(log)));  // Note [Payloads come from the pool]
  Tensor out = make_wrapper_tensor(std::move(payload), elem.sizes(), elem.strides(), elem.storage_offset(),
                                   elem.dtype(), elem.device());
  if (requires_grad) requires_grad_(out);
  return out;
}

const LoggingTensor* LoggingTensor::of(const Tensor& t) {
  return t.defined() ? dynamic_cast<const LoggingTensor*>(t.subclass()) : nullptr;
}

void LoggingTensor::dispatch(const OperatorHandle& op, Stack& stack) {
  std::shared_ptr<Log> log;
  for_each_argument_tensor(op, stack, [&](Tensor& t) {  // unwrap
    if (const LoggingTensor* lt = of(t)) {
      log = lt->log_;
      t = lt->elem_;
    }
  });
  op.call(stack);  // below the Python key: the next mode, then the kernel
  log->push_back(op.str());
  for_each_return_tensor(op, stack, [&](Tensor& t) {  // rewrap
    if (t.defined()) t = wrap(t, log);
  });
}

FlattenedTensor LoggingTensor::flatten(const Tensor&) const { return FlattenedTensor{{"elem"}, {elem_}, log_}; }

Tensor LoggingTensor::unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const {
  STRATA_CHECK(flat.inner.size() == 1, "LoggingTensor unflattens from one inner tensor, got ", flat.inner.size());
  return wrap(flat.inner[0], std::static_pointer_cast<Log>(std::const_pointer_cast<void>(flat.context)));
}

std::string LoggingTensor::repr(const Tensor&) const { return "LoggingTensor(" + elem_.str() + ")"; }

}  // namespace strata::tracer
