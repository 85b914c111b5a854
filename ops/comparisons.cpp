// ops/comparisons.cpp: the comparison operators (a > b, a == 0, ...), where with a number, and the
// composites equal and allclose, LibTorch's spellings over the comparison ops (ops/native/compare_ops.cpp).
#include <limits>

#include "ops/functions.h"
#include "ops/native/type_promotion.h"
#include "ops/torch_function.h"

namespace strata {

Tensor operator==(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator==, "torch.Tensor.__eq__", "self, other", a, b);
  return eq(a, b);
}
Tensor operator!=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator!=, "torch.Tensor.__ne__", "self, other", a, b);
  return ne(a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator>, "torch.Tensor.__gt__", "self, other", a, b);
  return gt(a, b);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator>=, "torch.Tensor.__ge__", "self, other", a, b);
  return ge(a, b);
}
Tensor operator<(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator<, "torch.Tensor.__lt__", "self, other", a, b);
  return lt(a, b);
}
Tensor operator<=(const Tensor& a, const Tensor& b) {
  STRATA_TORCH_FUNCTION(operator<=, "torch.Tensor.__le__", "self, other", a, b);
  return le(a, b);
}
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator==(const Scalar& a, const Tensor& b) { return eq(b, a); }
Tensor operator!=(const Scalar& a, const Tensor& b) { return ne(b, a); }
Tensor operator>(const Scalar& a, const Tensor& b) { return lt(b, a); }
Tensor operator>=(const Scalar& a, const Tensor& b) { return le(b, a); }
Tensor operator<(const Scalar& a, const Tensor& b) { return gt(b, a); }
Tensor operator<=(const Scalar& a, const Tensor& b) { return ge(b, a); }

Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  detail::check_defined(other, "aten::where", 2, "other");
  const Tensor self_tensor = scalar_tensor(self, {.dtype = ops::result_type(other, self)});
  return where(condition, self_tensor, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  detail::check_defined(self, "aten::where", 1, "self");
  const Tensor other_tensor = scalar_tensor(other, {.dtype = ops::result_type(self, other)});
  return where(condition, self, other_tensor);
}

namespace {
bool all_true(const Tensor& mask) {
  for (bool b : mask.to_vector<bool>())
    if (!b) return false;
  return true;
}
}  // namespace

bool equal(const Tensor& self, const Tensor& other) {
  detail::check_defined(self, "aten::equal", 0, "self");
  detail::check_defined(other, "aten::equal", 1, "other");
  if (self.dtype() != other.dtype()) {
    Error e(detail::str_cat("Expected object of scalar type ", dtype_c10_name(self.dtype()), " but got scalar type ",
                            dtype_c10_name(other.dtype()), " for argument 'other'"));
    e.set_op("aten::equal");
    throw e;
  }
  if (self.sizes() != other.sizes()) return false;
  return all_true(eq(self, other));
}

// PyTorch's isclose: equal elements are close (infinities of one sign included), then those whose
// error |self - other| is finite and at most atol + |rtol * other|; bools compare as float32.
bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  detail::check_defined(self, "aten::allclose", 0, "self");
  detail::check_defined(other, "aten::allclose", 1, "other");
  if (self.dtype() != other.dtype()) {
    Error e(detail::str_cat(dtype_c10_name(self.dtype()), " did not match ", dtype_c10_name(other.dtype())));
    e.set_op("aten::isclose");
    throw e;
  }
  const Tensor close = eq(self, other);
  if (equal_nan && is_floating_point(self.dtype())) {
    const Tensor self_nan = ne(self, self);
    logical_or_(close, logical_and(self_nan, ne(other, other)));
  }
  if (rtol == 0 && atol == 0) return all_true(close);
  const bool bools = self.dtype() == ScalarType::Bool;
  const Tensor a = bools ? to(self, ScalarType::Float32) : self;
  const Tensor b = bools ? to(other, ScalarType::Float32) : other;
  const Tensor allowed_error = add(abs(mul(b, rtol)), atol);
  const Tensor actual_error = abs(sub(a, b));
  const Tensor finite = lt(actual_error, std::numeric_limits<double>::infinity());
  logical_or_(close, logical_and_(finite, le(actual_error, allowed_error)));
  return all_true(close);
}

}  // namespace strata
