// ops/native/compare_ops.cpp: eq.Tensor and isnan, bool-valued elementwise tests. They are here for what
// max()'s derivative dispatches (evenly_distribute_backward: the positions equal to the maximum, or
// the NaNs when the maximum is NaN), and are public ops like any other. eq compares in the promoted
// dtype of its broadcast operands.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

// ---- eq.Tensor ----
TensorSpec eq_meta(const Tensor& self, const Tensor& other) {
  (void)result_type(self, other);
  return {broadcast_shapes(self.sizes(), other.sizes()), ScalarType::Bool, {}};
}
void eq_cpu(const Tensor& out, const Tensor& self, const Tensor& other) {
  const ScalarType common = result_type(self, other);
  const Operand a = Operand::in_dtype(self, common), b = Operand::in_dtype(other, common);
  bool* o = data_of<bool>(out);
  visit_dtype(common, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(*a);
    const T* y = data_of<T>(*b);
    const StridedLoop<3> loop(out.sizes(), {broadcast_strides(*a, out.sizes()), broadcast_strides(*b, out.sizes()),
                                            DimVector(out.strides())});
    loop.for_each([&](const std::array<std::int64_t, 3>& off) { o[off[2]] = load_element(x + off[0]) == load_element(y + off[1]); });
  });
}

// ---- isnan (false for integers and bools) ----
TensorSpec isnan_meta(const Tensor& self) { return {{}, ScalarType::Bool, {}, &self}; }
void isnan_cpu(const Tensor& out, const Tensor& self) {
  bool* o = data_of<bool>(out);
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(self);
    const StridedLoop<2> loop(out.sizes(), {DimVector(self.strides()), DimVector(out.strides())});
    loop.for_each([&](const std::array<std::int64_t, 2>& off) {
      if constexpr (std::is_floating_point_v<T>) o[off[1]] = std::isnan(x[off[0]]);
      else o[off[1]] = false;
    });
  });
}

}  // namespace

void register_compare_ops(Dispatcher& d) {
  def_functional<eq_meta, eq_cpu>(
      d, "aten", "eq.Tensor(Tensor self, Tensor other) -> Tensor",
      FrontEnd::python("torch.eq"));
  def_functional<isnan_meta, isnan_cpu>(d, "aten", "isnan(Tensor self) -> Tensor", FrontEnd::python("torch.isnan"));
}

}  // namespace strata::ops
