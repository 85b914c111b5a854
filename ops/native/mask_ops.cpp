// ops/native/mask_ops.cpp: choosing elements by a mask or by position: where.self (self where the
// condition holds, else other), masked_fill.Scalar and masked_fill_.Scalar (value where the mask
// holds), triu and tril (the matrices' upper or lower triangle, the rest zero). Masks and conditions
// are bool tensors, as in PyTorch 2.8.
#include "core/element_conversion.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

// c10's TypeMeta name of a dtype, which masked_fill_'s error prints ("float", "long int").
std::string_view type_meta_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Int64: return "long int";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Bool: return "bool";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float8_e4m3fn: break;
  }
  return "c10::Float8_e4m3fn";
}

// ---- where.self: condition ? self : other, broadcast together, in their promoted dtype ----
TensorSpec where_meta(const Tensor& condition, const Tensor& self, const Tensor& other) {
  STRATA_CHECK(condition.dtype() == ScalarType::Bool,
               "where expected condition to be a boolean tensor, but got a tensor with dtype ",
               dtype_c10_name(condition.dtype()));
  const ScalarType dtype = result_type(self, other);
  DimVector shape = broadcast_shapes(broadcast_shapes(condition.sizes(), self.sizes()), other.sizes());
  DimVector strides = output_strides(shape, {&condition, &self, &other});
  return {std::move(shape), dtype, std::move(strides)};
}
void where_cpu(const Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other) {
  const Operand a = Operand::in_dtype(self, out.dtype()), b = Operand::in_dtype(other, out.dtype());
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = data_of<T>(out);
    const bool* c = data_of<bool>(condition);
    const T* x = data_of<T>(*a);
    const T* y = data_of<T>(*b);
    const StridedLoop<4> loop(out.sizes(), {DimVector(out.strides()), broadcast_strides(condition, out.sizes()),
                                            broadcast_strides(*a, out.sizes()), broadcast_strides(*b, out.sizes())});
    loop.for_each([&](const std::array<std::int64_t, 4>& off) {
      o[off[0]] = load_element(c + off[1]) ? load_element(x + off[2]) : load_element(y + off[3]);
    });
  });
}

// ---- masked_fill_.Scalar, masked_fill.Scalar ----
void check_mask(const Tensor& mask) {
  STRATA_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
               type_meta_name(mask.dtype()));
}
// Writes value into `self` where `mask` (broadcast to self) holds.
void fill_where(const Tensor& self, const Tensor& mask, const Scalar& value) {
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = scalar_to_element<T>(value);
    T* o = data_of<T>(self);
    const bool* m = data_of<bool>(mask);
    const StridedLoop<2> loop(self.sizes(), {DimVector(self.strides()), broadcast_strides(mask, self.sizes())});
    loop.for_each([&](const std::array<std::int64_t, 2>& off) {
      if (load_element(m + off[1])) o[off[0]] = v;
    });
  });
}

void masked_fill__check(const Tensor& self, const Tensor& mask, Scalar) {
  check_mask(mask);
  assert_no_partial_overlap(self, mask);
  if (self.sizes() == mask.sizes()) return;
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  STRATA_CHECK(IntArrayRef(shape) == self.sizes(), "output with shape ", shape_str(self.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
}
void masked_fill__cpu(const Tensor& self, const Tensor& mask, Scalar value) { fill_where(self, mask, value); }

// The functional form is PyTorch's: self and mask expanded to their broadcast shape (mask first, as
// expand_outplace takes them), a contiguous copy of self, then masked_fill_ on it.
TensorSpec masked_fill_meta(const Tensor& self, const Tensor& mask, Scalar) {
  DimVector shape = broadcast_shapes(mask.sizes(), self.sizes());
  check_mask(mask);
  return {std::move(shape), self.dtype(), {}};
}
void masked_fill_cpu(const Tensor& out, const Tensor& self, const Tensor& mask, Scalar value) {
  copy_elements(out, self);
  fill_where(out, mask, value);
}

// ---- triu, tril: the last two dimensions are the matrices; element (i, j) is kept when j - i >= k
// (triu) or j - i <= k (tril), else 0. A contiguous output, as PyTorch's. ----
template <bool Upper>
TensorSpec triangle_meta(const Tensor& self, std::int64_t) {
  STRATA_CHECK(self.dim() >= 2, Upper ? "triu" : "tril", ": input tensor must have at least 2 dimensions");
  return {DimVector(self.sizes()), self.dtype(), {}};
}
template <bool Upper>
void triangle_cpu(const Tensor& out, const Tensor& self, std::int64_t diagonal) {
  const std::int64_t cols = self.sizes().back(), rows = self.sizes()[self.sizes().size() - 2];
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = data_of<T>(out);
    const T* x = data_of<T>(self);
    std::int64_t at = 0;  // out is contiguous: its elements in order
    const StridedLoop<1> loop(self.sizes(), {DimVector(self.strides())});
    loop.for_each_serial([&](const std::array<std::int64_t, 1>& off) {
      const std::int64_t j = at % cols, i = (at / cols) % rows;
      const bool keep = Upper ? j - i >= diagonal : j - i <= diagonal;
      o[at++] = keep ? load_element(x + off[0]) : T(0);
    });
  });
}
constexpr auto triu_meta = triangle_meta<true>;
constexpr auto tril_meta = triangle_meta<false>;
constexpr auto triu_cpu = triangle_cpu<true>;
constexpr auto tril_cpu = triangle_cpu<false>;

}  // namespace

// register_mask_ops(): the rows of mask_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/mask_ops_rows.inc"

}  // namespace strata::ops
