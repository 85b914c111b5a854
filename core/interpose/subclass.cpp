// core/interpose/subclass.cpp: making a non-wrapper subclass tensor, and calling through below the Python key.
#include "core/interpose/subclass.h"

namespace strata {

Tensor make_subclass(IntrusivePtr<TensorSubclass> subclass, const Tensor& data) {
  STRATA_CHECK(subclass, "make_subclass needs a subclass payload");
  STRATA_CHECK(data.defined(), "make_subclass: data is an undefined tensor");
  STRATA_CHECK(!data.subclass(), "make_subclass: data is already a ", data.subclass()->type_name(),
               " tensor; pass a plain tensor");
  STRATA_CHECK(data.impl()->has_data() || data.is_meta(),
               "make_subclass: data has no storage (a view of a wrapper tensor); pass a tensor with data");
  register_interposer();  // its ops reach the payload's handler through it
  Tensor alias = detail::make_alias(data);
  alias.impl()->set_subclass(std::move(subclass));
  return alias;
}

void call_below_python(const OperatorHandle& op, Stack& stack) {
  const ExcludeKeyGuard below_python(DispatchKey::Python);
  op.call(stack);
}

}  // namespace strata
