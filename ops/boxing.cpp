// ops/boxing.cpp: output allocation and view construction for the boxed adapters.
#include "ops/boxing.h"

namespace strata::ops {

Tensor allocate(const TensorSpec& spec, Device device) {
  if (spec.strides.empty()) return strata::detail::make_contiguous_tensor(spec.sizes, spec.dtype, device);
  return strata::detail::make_tensor(spec.sizes, spec.strides, spec.dtype, device);
}

const Tensor& undefined_tensor() {
  static const Tensor undefined;
  return undefined;
}

namespace detail {
Tensor make_view_of(const Tensor& base, const ViewSpec& spec) {
  return strata::detail::make_view(base, spec.sizes, spec.strides, spec.storage_offset);
}
}  // namespace detail

}  // namespace strata::ops
