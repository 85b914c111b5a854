// ops/native/type_promotion.cpp: result_type and can_cast (c10's ResultTypeState and combine_categories).
#include "ops/native/type_promotion.h"

#include <optional>

namespace strata::ops {

namespace {

std::optional<ScalarType> promote(std::optional<ScalarType> a, ScalarType b) {
  return a ? promote_types(*a, b) : b;
}

// c10::combine_categories restricted to bool/int64/float32/float64.
std::optional<ScalarType> combine_categories(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating_point(*higher)) return higher;
  if (*higher == ScalarType::Bool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

namespace {
// The dtype a wrapped number contributes: the default float dtype for floats, else its own.
ScalarType wrapped_dtype(ScalarType dtype) { return is_floating_point(dtype) ? ScalarType::Float32 : dtype; }

ScalarType scalar_dtype(const Scalar& value) {
  return value.is_floating_point() ? ScalarType::Float64 : value.is_bool() ? ScalarType::Bool : ScalarType::Int64;
}
}  // namespace

ScalarType result_type_of_mixed(const Tensor& a, const Tensor& b) {
  std::optional<ScalarType> dimensioned, zero_dim, wrapped;
  for (const Tensor* t : {&a, &b}) {
    if (t->impl()->is_wrapped_number()) wrapped = promote(wrapped, wrapped_dtype(t->dtype()));
    else if (t->dim() > 0) dimensioned = promote(dimensioned, t->dtype());
    else zero_dim = promote(zero_dim, t->dtype());
  }
  return *combine_categories(dimensioned, combine_categories(zero_dim, wrapped));
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  const std::optional<ScalarType> wrapped = wrapped_dtype(scalar_dtype(b));
  if (a.impl()->is_wrapped_number()) return *promote(wrapped_dtype(a.dtype()), *wrapped);
  if (a.dim() > 0) return *combine_categories(a.dtype(), wrapped);
  return *combine_categories(std::nullopt, combine_categories(a.dtype(), wrapped));
}

Tensor wrapped_scalar_tensor(const Scalar& value) {
  Tensor out = scalar_tensor(value, scalar_dtype(value));
  out.impl()->set_wrapped_number(true);
  return out;
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace strata::ops
