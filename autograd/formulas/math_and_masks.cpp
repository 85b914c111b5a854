// autograd/formulas/math_and_masks.cpp: the derivative rows of the unary math ops (sqrt, rsqrt, log,
// abs, sgn, sin, cos), pow.Tensor_Scalar, clamp, where, masked_fill, triu and tril, and of the
// comparisons and factories that have none: PyTorch's tools/autograd/derivatives.yaml entry quoted
// above each row, its formulas written with the same helper calls (and so the same dispatched ops).
// Rows and their Notes: autograd/derivative_table.h.
#include <optional>

#include "autograd/formula_node.h"
#include "autograd/formulas/rows.h"
#include "ops/functions.h"

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
