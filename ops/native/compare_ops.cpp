// ops/native/compare_ops.cpp: bool-valued elementwise tests: the comparisons eq, ne, gt, ge, lt, le
// (.Tensor and .Scalar), isnan, logical_and, logical_and_ and logical_or_. Comparisons and the logical
// ops compare in the promoted dtype of their broadcast operands. eq and the logical ops are also what
// max()'s derivative dispatches (evenly_distribute_backward), clamp's (ge, le, logical_and_) and
// pow's.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

// Calls fn(offset in out, a's element, b's element) over out's elements, self and other promoted to
// their common dtype and broadcast to out; `Serial` for the ops that need no thread team.
template <bool Serial, typename Fn>
void for_each_promoted_pair(const Tensor& out, const Tensor& self, const Tensor& other, const Fn& fn) {
  const ScalarType common = result_type(self, other);
  const Operand a = Operand::in_dtype(self, common), b = Operand::in_dtype(other, common);
  visit_dtype(common, [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(*a);
    const T* y = data_of<T>(*b);
    const StridedLoop<3> loop(out.sizes(), {broadcast_strides(*a, out.sizes()), broadcast_strides(*b, out.sizes()),
                                            DimVector(out.strides())});
    const auto element = [&](const std::array<std::int64_t, 3>& off) {
      fn(off[2], load_element(x + off[0]), load_element(y + off[1]));
    };
    if constexpr (Serial) loop.for_each_serial(element);
    else loop.for_each(element);
  });
}

// ---- eq, ne, gt, ge, lt, le (.Tensor and .Scalar): bools, compared in the promoted dtype ----
enum class Cmp { Eq, Ne, Gt, Ge, Lt, Le };
template <Cmp C, typename T>
bool compare(T x, T y) {
  if constexpr (C == Cmp::Eq) return x == y;
  else if constexpr (C == Cmp::Ne) return x != y;
  else if constexpr (C == Cmp::Gt) return x > y;
  else if constexpr (C == Cmp::Ge) return x >= y;
  else if constexpr (C == Cmp::Lt) return x < y;
  else return x <= y;
}
TensorSpec compare_meta(const Tensor& self, const Tensor& other) {
  (void)result_type(self, other);
  return {broadcast_shapes(self.sizes(), other.sizes()), ScalarType::Bool, {}};
}
template <Cmp C>
void compare_cpu(const Tensor& out, const Tensor& self, const Tensor& other) {
  bool* o = data_of<bool>(out);
  for_each_promoted_pair<false>(out, self, other, [o](std::int64_t at, auto x, auto y) { o[at] = compare<C>(x, y); });
}
// The number as a wrapped 0-d tensor: it promotes as PyTorch's wrapped scalars do (an int64 tensor
// compared with 0.5 compares in float32).
TensorSpec compare_scalar_meta(const Tensor& self, Scalar) { return {{}, ScalarType::Bool, {}, &self}; }
template <Cmp C>
void compare_scalar_cpu(const Tensor& out, const Tensor& self, Scalar other) {
  compare_cpu<C>(out, self, wrapped_scalar_tensor(other));
}
constexpr auto eq_cpu = compare_cpu<Cmp::Eq>;
constexpr auto ne_cpu = compare_cpu<Cmp::Ne>;
constexpr auto gt_cpu = compare_cpu<Cmp::Gt>;
constexpr auto ge_cpu = compare_cpu<Cmp::Ge>;
constexpr auto lt_cpu = compare_cpu<Cmp::Lt>;
constexpr auto le_cpu = compare_cpu<Cmp::Le>;
constexpr auto eq_scalar_cpu = compare_scalar_cpu<Cmp::Eq>;
constexpr auto ne_scalar_cpu = compare_scalar_cpu<Cmp::Ne>;
constexpr auto gt_scalar_cpu = compare_scalar_cpu<Cmp::Gt>;
constexpr auto ge_scalar_cpu = compare_scalar_cpu<Cmp::Ge>;
constexpr auto lt_scalar_cpu = compare_scalar_cpu<Cmp::Lt>;
constexpr auto le_scalar_cpu = compare_scalar_cpu<Cmp::Le>;

// ---- logical_and, logical_or_: the truth (x != 0) of each operand, in their promoted dtype ----
// Both are there for max()'s derivative as PyTorch writes it for subclasses and modes
// (evenly_distribute_backward: (input == value).logical_or_(input.isnan().logical_and(value.isnan()))).
// Calls fn(offset of out, a's truth, b's truth) over out's elements.
template <typename Fn>
void for_each_truth(const Tensor& out, const Tensor& self, const Tensor& other, const Fn& fn) {
  for_each_promoted_pair<true>(out, self, other, [&fn](std::int64_t at, auto x, auto y) {
    fn(at, x != decltype(x)(0), y != decltype(y)(0));
  });
}

void logical_and_cpu(const Tensor& out, const Tensor& self, const Tensor& other) {
  bool* o = data_of<bool>(out);
  for_each_truth(out, self, other, [o](std::int64_t at, bool a, bool b) { o[at] = a && b; });
}

// In place (logical_and_, logical_or_): self keeps its dtype and shape (other broadcasts to it), and
// gets 1 or 0.
void logical_inplace_check(const Tensor& self, const Tensor& other) {
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, other);
  (void)result_type(self, other);
  if (self.sizes() == other.sizes()) return;
  const DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  STRATA_CHECK(IntArrayRef(shape) == self.sizes(), "output with shape ", shape_str(self.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
}
template <bool And>
void logical_inplace_cpu(const Tensor& self, const Tensor& other) {
  visit_dtype(self.dtype(), [&](auto zero) {
    using S = decltype(zero);
    S* o = data_of<S>(self);
    for_each_truth(self, self, other, [o](std::int64_t at, bool a, bool b) { o[at] = static_cast<S>(And ? a && b : a || b); });
  });
}
constexpr auto logical_and__cpu = logical_inplace_cpu<true>;
constexpr auto logical_or__cpu = logical_inplace_cpu<false>;

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

// register_compare_ops(): the rows of compare_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/compare_ops_rows.inc"

}  // namespace strata::ops
