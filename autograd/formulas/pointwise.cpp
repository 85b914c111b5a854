// autograd/formulas/pointwise.cpp: the derivative rows of arithmetic, exp, reciprocal, neg, relu and threshold_backward: PyTorch's
// tools/autograd/derivatives.yaml entry quoted above each row, its formulas written with the same
// helper calls (and so the same dispatched ops). Rows and their Notes: autograd/derivative_table.h.
#include <limits>
#include <optional>

#include "autograd/formula_node.h"
#include "autograd/formulas/functions_manual.h"
#include "autograd/formulas/rows.h"
#include "autograd/grad_mode.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::autograd::formulas {

std::vector<DerivativeRow> pointwise_rows() {
  // - name: add.Tensor(...)   self: handle_r_to_c(self.scalar_type(), grad)
  //                           other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))
  const std::vector<InputFormula> add_formulas = {{"self", identity},
                                         {"other", [](C c) { return maybe_multiply(c.grad(), c.scalar("alpha")); }}};
  // - name: sub.Tensor(...)   self: handle_r_to_c(self.scalar_type(), grad)
  //                           other: handle_r_to_c(other.scalar_type(), maybe_multiply(-grad, alpha.conj()))
  const std::vector<InputFormula> sub_formulas = {
      {"self", identity}, {"other", [](C c) { return maybe_multiply(neg(c.grad()), c.scalar("alpha")); }}};
  // - name: mul.Tensor(...)   self: mul_tensor_backward(grad, other, self.scalar_type())
  //                           other: mul_tensor_backward(grad, self, other.scalar_type())
  const std::vector<InputFormula> mul_formulas = {{"self", {"other"}, [](C c) { return mul(c.grad(), c.saved("other")); }},
                                         {"other", {"self"}, [](C c) { return mul(c.grad(), c.saved("self")); }}};
  return {
      {.op = "aten::add", .overload = "Tensor", .formulas = add_formulas},
      {.op = "aten::add_", .overload = "Tensor", .formulas = add_formulas},
      // - name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
      //   self: handle_r_to_c(self.scalar_type(), grad)
      {.op = "aten::add", .overload = "Scalar", .node_name = "AddBackward1", .formulas = {{"self", identity}}},
      {.op = "aten::sub", .overload = "Tensor", .formulas = sub_formulas},
      // - name: sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
      //   self: handle_r_to_c(self.scalar_type(), grad)
      {.op = "aten::sub", .overload = "Scalar", .node_name = "SubBackward1", .formulas = {{"self", identity}}},
      {.op = "aten::sub_", .overload = "Tensor", .formulas = sub_formulas},
      {.op = "aten::mul", .overload = "Tensor", .formulas = mul_formulas},
      // - name: mul.Scalar(Tensor self, Scalar other)   self: mul_tensor_backward(grad, other, self.scalar_type())
      {.op = "aten::mul", .overload = "Scalar", .node_name = "MulBackward1",
       .formulas = {{"self", [](C c) { return mul(c.grad(), c.scalar("other")); }}}},
      // mul_.Scalar takes mul.Scalar's row (MulBackward1): grad * other.
      {.op = "aten::mul_", .overload = "Scalar", .node_name = "MulBackward1",
       .formulas = {{"self", [](C c) { return mul(c.grad(), c.scalar("other")); }}}},
      // mul_'s `self` formula reads self as it was before the write: saved as a clone (PyTorch's
      // original_self = self.clone(); Note [A formula declares the tensors it reads]).
      {.op = "aten::mul_", .overload = "Tensor", .formulas = mul_formulas},
      // - name: div.Tensor(...)   self: div_tensor_self_backward(grad, other, self.scalar_type())
      //                           other: div_tensor_other_backward(grad, self, other)
      {.op = "aten::div", .overload = "Tensor",
       .formulas = {{"self", {"other"}, [](C c) { return div(c.grad(), c.saved("other")); }},
                    {"other", {"self", "other"},
                     [](C c) {
                       const Tensor other = c.saved("other");
                       // PyTorch runs it first: Note [An op's operands are dispatched in a written order]
                       const Tensor ratio = div(div(c.saved("self"), other), other);
                       return mul(neg(c.grad()), ratio);
                     }}}},
      // - name: div.Scalar(Tensor self, Scalar other)   self: div_tensor_self_backward(grad, other, self.scalar_type())
      // div_tensor_self_backward<Scalar> is grad / other, C++'s Tensor / Scalar: div.Scalar. div_.Scalar
      // takes the same row (DivBackward1).
      {.op = "aten::div", .overload = "Scalar", .node_name = "DivBackward1",
       .formulas = {{"self", [](C c) { return div(c.grad(), c.scalar("other")); }}}},
      {.op = "aten::div_", .overload = "Scalar", .node_name = "DivBackward1",
       .formulas = {{"self", [](C c) { return div(c.grad(), c.scalar("other")); }}}},
      // - name: exp(Tensor self)  self: grad * result.conj()
      {.op = "aten::exp",
       .formulas = {{"self", {"result"}, [](C c) { return mul(c.grad(), c.saved("result")); }}}},
      // - name: reciprocal(Tensor self)  self: -grad * (result * result).conj()
      {.op = "aten::reciprocal",
       .formulas = {{"self", {"result"},
                     [](C c) {
                       // The saved result is unpacked once, as PyTorch's generated code does (each unpack
                       // is a detach a mode sees). PyTorch runs the square first: Note [An op's operands
                       // are dispatched in a written order]
                       const Tensor result = c.saved("result");
                       const Tensor square = mul(result, result);
                       return mul(neg(c.grad()), square);
                     }}}},
      // - name: neg(Tensor self)  self: grad.neg()
      {.op = "aten::neg", .formulas = {{"self", [](C c) { return neg(c.grad()); }}}},
      // - name: relu(Tensor self)  self: threshold_backward(grad, result, 0)
      {.op = "aten::relu",
       .formulas = {{"self", {"result"}, [](C c) { return threshold_backward(c.grad(), c.saved("result"), 0); }}}},
      // - name: threshold_backward(...)  grad_output: threshold_backward(grad, self, threshold)
      //                                  self: zeros_like(grad)
      {.op = "aten::threshold_backward",
       .formulas = {{"grad_output", {"self"}, [](C c) { return threshold_backward(c.grad(), c.saved("self"), c.scalar("threshold")); }},
                    {"self", zeros_like_grad}}},
  };
}

}  // namespace strata::autograd::formulas
