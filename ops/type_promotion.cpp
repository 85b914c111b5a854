// ops/type_promotion.cpp: result_type and can_cast (c10's ResultTypeState and combine_categories).
#include "ops/type_promotion.h"

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

ScalarType result_type(const Tensor& a, const Tensor& b) {
  std::optional<ScalarType> dimensioned, zero_dim;
  for (const Tensor* t : {&a, &b}) {
    if (t->dim() > 0) dimensioned = promote(dimensioned, t->dtype());
    else zero_dim = promote(zero_dim, t->dtype());
  }
  return *combine_categories(dimensioned, zero_dim);
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace strata::ops
