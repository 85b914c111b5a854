// ops/native/compare_ops.cpp: eq.Tensor, isnan, logical_and and logical_or_, bool-valued elementwise
// tests. They are here for what max()'s derivative dispatches (evenly_distribute_backward: the
// positions equal to the maximum, or NaN where the maximum is NaN), and are public ops like any other.
// eq and the logical ops compare in the promoted dtype of their broadcast operands.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
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

// ---- logical_and, logical_or_: the truth (x != 0) of each operand, in their promoted dtype ----
// Both are there for max()'s derivative as PyTorch writes it for subclasses and modes
// (evenly_distribute_backward: (input == value).logical_or_(input.isnan().logical_and(value.isnan()))).
// Calls fn(offset of a, offset of b, offset of out, a's truth, b's truth) over out's elements.
template <typename Fn>
void for_each_truth(const Tensor& out, const Tensor& self, const Tensor& other, const Fn& fn) {
  const ScalarType common = result_type(self, other);
  const Operand a = Operand::in_dtype(self, common), b = Operand::in_dtype(other, common);
  visit_dtype(common, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(*a);
    const T* y = data_of<T>(*b);
    const StridedLoop<3> loop(out.sizes(), {broadcast_strides(*a, out.sizes()), broadcast_strides(*b, out.sizes()),
                                            DimVector(out.strides())});
    loop.for_each_serial([&](const std::array<std::int64_t, 3>& off) {
      fn(off[2], load_element(x + off[0]) != T(0), load_element(y + off[1]) != T(0));
    });
  });
}

TensorSpec logical_and_meta(const Tensor& self, const Tensor& other) {
  (void)result_type(self, other);
  return {broadcast_shapes(self.sizes(), other.sizes()), ScalarType::Bool, {}};
}
void logical_and_cpu(const Tensor& out, const Tensor& self, const Tensor& other) {
  bool* o = data_of<bool>(out);
  for_each_truth(out, self, other, [o](std::int64_t at, bool a, bool b) { o[at] = a && b; });
}

// In place: self keeps its dtype and shape (other broadcasts to it), and gets 1 or 0.
void logical_or__check(const Tensor& self, const Tensor& other) {
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, other);
  (void)result_type(self, other);
  if (self.sizes() == other.sizes()) return;
  const DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  STRATA_CHECK(IntArrayRef(shape) == self.sizes(), "output with shape ", shape_str(self.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
}
void logical_or__cpu(const Tensor& self, const Tensor& other) {
  visit_dtype(self.dtype(), [&](auto zero) {
    using S = decltype(zero);
    S* o = data_of<S>(self);
    for_each_truth(self, self, other, [o](std::int64_t at, bool a, bool b) { o[at] = static_cast<S>(a || b); });
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
  // Whether both elements are nonzero, as bools.
  def_functional<logical_and_meta, logical_and_cpu>(
      d, "aten", "logical_and(Tensor self, Tensor other) -> Tensor",
      FrontEnd::python("torch.logical_and"));
  // self = whether either element is nonzero, in self's dtype.
  def_inplace<logical_or__check, logical_or__cpu>(
      d, "aten", "logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
      FrontEnd::python("torch.Tensor.logical_or_"));
}

}  // namespace strata::ops
