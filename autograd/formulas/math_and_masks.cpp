// autograd/formulas/math_and_masks.cpp: the derivative rows of the unary math ops (sqrt, rsqrt, log,
// abs, sgn, sin, cos), pow (Tensor_Scalar, Tensor_Tensor, pow_.Tensor), clamp, where, masked_fill, triu and tril, and of the
// comparisons and factories that have none: PyTorch's tools/autograd/derivatives.yaml entry quoted
// above each row, its formulas written with the same helper calls (and so the same dispatched ops).
// Rows and their Notes: autograd/derivative_table.h.
#include <optional>

#include "autograd/formula_node.h"
#include "autograd/formulas/rows.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::autograd::formulas {

namespace {

std::optional<Scalar> optional_scalar(const IValue& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_scalar();
}

// PyTorch's pow_backward: zeros for exponent 0, else grad * (exponent * self.pow(exponent - 1)),
// the exponent read as a double.
Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent) {
  if (exponent.equals(0.0)) return zeros_like(self);
  const double e = exponent.to_double();
  const Tensor power = pow(self, e - 1);
  const Tensor scaled = mul(power, e);
  return mul(grad, scaled);
}

// PyTorch's pow_backward_self: where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1))).
// where's arguments run last to first, as in PyTorch's build (Note [An op's operands are dispatched
// in a written order]); the zero is a 0-d scalar_tensor in grad's dtype, as 2.8 makes it.
Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  const Tensor power = pow(self, sub(exponent, Scalar(1)));
  const Tensor derivative = mul(exponent, power);
  const Tensor product = mul(grad, derivative);
  const Tensor zero = scalar_tensor(0.0, {.dtype = grad.dtype()});
  const Tensor exponent_is_zero = eq(exponent, Scalar(0.0));
  return where(exponent_is_zero, zero, product);
}

// PyTorch's pow_backward_exponent: grad * where(self == 0 and exponent >= 0, 0, result * log(self)),
// self in the promoted dtype. d(a^b)/db is taken as 0 at a = 0, b >= 0 (by continuity from b > 0) and
// as result * log(0) = -inf (times 0^b) for b < 0, as PyTorch does.
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  const Tensor exponent_nonnegative = ge(exponent, Scalar(0.0));
  const Tensor self_is_zero = eq(self, Scalar(0));
  const Tensor cond = logical_and(self_is_zero, exponent_nonnegative);
  const Tensor promoted_self = to(self, ops::result_type(self, exponent));
  const Tensor log_self = log(promoted_self);
  const Tensor derivative = mul(result, log_self);
  const Tensor zero = scalar_tensor(0.0, {.dtype = grad.dtype()});
  const Tensor masked = where(cond, zero, derivative);
  return mul(grad, masked);
}

// PyTorch's clamp_backward: grad where min <= self <= max (the bounds given), else 0; the subgradient
// at a bound is 1.
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  if (!min && !max) return grad;
  const Tensor zero = scalar_tensor(0., {.dtype = grad.dtype()});
  Tensor inside;
  if (min && max) {
    inside = ge(self, *min);
    logical_and_(inside, le(self, *max));
  } else {
    inside = min ? ge(self, *min) : le(self, *max);
  }
  return where(inside, grad, zero);
}

}  // namespace

std::vector<DerivativeRow> math_and_mask_rows() {
  const auto non_differentiable = [](std::string_view op, std::string_view overload = "") {
    return DerivativeRow{.op = op, .overload = overload, .kind = D::NonDifferentiable};
  };
  // - name: masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
  //   self: grad.masked_fill(mask, 0)    mask: non_differentiable      (masked_fill_.Scalar: the same)
  const std::vector<InputFormula> masked_fill_formulas = {
      {"self", {"mask"}, [](C c) { return masked_fill(c.grad(), c.saved("mask"), Scalar(0)); }}};
  const std::vector<InputFormula> pow_tensor_formulas = {
      {"exponent", {"self", "exponent", "result"},
       [](C c) { return pow_backward_exponent(c.grad(), c.saved("self"), c.saved("exponent"), c.saved("result")); }},
      {"self", {"self", "exponent"}, [](C c) { return pow_backward_self(c.grad(), c.saved("self"), c.saved("exponent")); }}};
  return {
      // - name: sqrt(Tensor self) -> Tensor   self: grad / (2 * result.conj())
      {.op = "aten::sqrt",
       .formulas = {{"self", {"result"}, [](C c) { return div(c.grad(), mul(c.saved("result"), Scalar(2))); }}}},
      // - name: rsqrt(Tensor self) -> Tensor   self: -0.5 * grad * result.pow(3).conj()
      // The right operand runs first (Note [An op's operands are dispatched in a written order]).
      {.op = "aten::rsqrt",
       .formulas = {{"self", {"result"},
                     [](C c) {
                       const Tensor cube = pow(c.saved("result"), Scalar(3));
                       const Tensor scaled = mul(c.grad(), Scalar(-0.5));
                       return mul(scaled, cube);
                     }}}},
      // - name: log(Tensor self) -> Tensor   self: grad.div(self.conj())
      {.op = "aten::log", .formulas = {{"self", {"self"}, [](C c) { return div(c.grad(), c.saved("self")); }}}},
      // - name: abs(Tensor self) -> Tensor   self: grad * self.sgn()
      {.op = "aten::abs", .formulas = {{"self", {"self"}, [](C c) { return mul(c.grad(), sgn(c.saved("self"))); }}}},
      // - name: sgn(Tensor self) -> Tensor   self: sgn_backward(self, grad, result)
      // For real inputs sgn_backward is zero; PyTorch makes it with _efficientzerotensor, strata with zeros.
      {.op = "aten::sgn",
       .formulas = {{"self", [](C c) { return zeros(c.grad().sizes(), {.dtype = c.grad().dtype()}); }}}},
      // - name: sin(Tensor self) -> Tensor   self: grad * self.cos().conj()
      {.op = "aten::sin", .formulas = {{"self", {"self"}, [](C c) { return mul(c.grad(), cos(c.saved("self"))); }}}},
      // - name: cos(Tensor self) -> Tensor   self: grad * -self.sin().conj()
      {.op = "aten::cos",
       .formulas = {{"self", {"self"}, [](C c) { return mul(c.grad(), neg(sin(c.saved("self")))); }}}},
      // - name: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
      //   self: pow_backward(grad, self, exponent)
      {.op = "aten::pow", .overload = "Tensor_Scalar",
       .formulas = {{"self", {"self"}, [](C c) { return pow_backward(c.grad(), c.saved("self"), c.scalar("exponent")); }}}},
      // - name: pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
      //   self: pow_backward_self(grad, self, exponent)
      //   exponent: pow_backward_exponent(grad, self, exponent, result)
      // pow_.Tensor takes the same formulas, self read as it was before the write.
      {.op = "aten::pow", .overload = "Tensor_Tensor", .node_name = "PowBackward1", .formulas = pow_tensor_formulas},
      {.op = "aten::pow_", .overload = "Tensor", .node_name = "PowBackward1", .formulas = pow_tensor_formulas},
      // - name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
      //   self: clamp_backward(grad, self, min, max)
      {.op = "aten::clamp",
       .formulas = {{"self", {"self"},
                     [](C c) {
                       return clamp_backward(c.grad(), c.saved("self"), optional_scalar(c.arg("min")),
                                             optional_scalar(c.arg("max")));
                     }}}},
      // - name: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
      //   condition: non_differentiable    self: where(condition, grad, 0)    other: where(condition, 0, grad)
      {.op = "aten::where", .overload = "self",
       .formulas = {{"self", {"condition"}, [](C c) { return where(c.saved("condition"), c.grad(), Scalar(0)); }},
                    {"other", {"condition"}, [](C c) { return where(c.saved("condition"), Scalar(0), c.grad()); }}},
       .non_differentiable = {"condition"}},
      {.op = "aten::masked_fill", .overload = "Scalar", .formulas = masked_fill_formulas, .non_differentiable = {"mask"}},
      {.op = "aten::masked_fill_", .overload = "Scalar", .formulas = masked_fill_formulas, .non_differentiable = {"mask"}},
      // - name: triu(Tensor self, int diagonal=0) -> Tensor   self: grad.triu(diagonal)
      {.op = "aten::triu", .formulas = {{"self", [](C c) { return triu(c.grad(), c.integer("diagonal")); }}}},
      // - name: tril(Tensor self, int diagonal=0) -> Tensor   self: grad.tril(diagonal)
      {.op = "aten::tril", .formulas = {{"self", [](C c) { return tril(c.grad(), c.integer("diagonal")); }}}},
      // Comparisons return bools (output_differentiability: [False]); the factories have no inputs.
      non_differentiable("aten::eq", "Scalar"),
      non_differentiable("aten::ne", "Tensor"),
      non_differentiable("aten::ne", "Scalar"),
      non_differentiable("aten::gt", "Tensor"),
      non_differentiable("aten::gt", "Scalar"),
      non_differentiable("aten::ge", "Tensor"),
      non_differentiable("aten::ge", "Scalar"),
      non_differentiable("aten::lt", "Tensor"),
      non_differentiable("aten::lt", "Scalar"),
      non_differentiable("aten::le", "Tensor"),
      non_differentiable("aten::le", "Scalar"),
      non_differentiable("aten::logical_and_"),
      non_differentiable("aten::eye"),
      non_differentiable("aten::eye", "m"),
      non_differentiable("aten::linspace"),
      non_differentiable("aten::scalar_tensor"),
  };
}

}  // namespace strata::autograd::formulas
