// ops/boxing.cpp: output allocation and view construction for the boxed adapters.
#include "ops/boxing.h"

#include "core/interposer.h"

namespace strata::ops {

const Tensor& undefined_tensor() {
  static const Tensor undefined;
  return undefined;
}

namespace detail {
void throw_no_cpu_data(std::size_t position, const Tensor& t) {
  strata::detail::throw_error(strata::detail::str_cat(
      "expected tensors with data on the CPU, but argument ", static_cast<int>(position), " is a ",
      t.subclass() ? t.subclass()->type_name() : std::string_view("meta"),
      " tensor without storage (was the Python key excluded around a wrapper tensor?)"));
}

Tensor make_view_of(const Tensor& base, ViewSpec&& spec) {
  return Tensor(IntrusivePtr<TensorImpl>::make(base.impl()->storage(), spec.storage_offset, std::move(spec.sizes),
                                               std::move(spec.strides), base.dtype(), base.device()));
}
}  // namespace detail

}  // namespace strata::ops
