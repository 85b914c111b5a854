// autograd/formulas/softmax_and_loss.cpp: the derivative rows of _log_softmax, nll_loss and their backwards: PyTorch's
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

std::vector<DerivativeRow> softmax_and_loss_rows() {
  return {
      // - name: _log_softmax(...)   self: _log_softmax_backward_data(grad, result, dim, self.scalar_type())
      softmax_row<_log_softmax_backward_data>("aten::_log_softmax"),
      // - name: _log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype)
      //   grad_output: grad.to(output.dtype()) - (grad.to(output.dtype()) * output.exp()).sum(dim, true)
      //   output: (-grad_output.sum(dim, true) * output.exp() * grad.to(output.dtype())).to(output.dtype())
      // Each step is a statement (Note [An op's operands are dispatched in a written order]): GCC's
      // order for PyTorch's expression (the right operand of a product first) is what PyTorch 1.13's
      // trace shows: exp, then sum.
      {.op = "aten::_log_softmax_backward_data",
       .formulas = {{"grad_output", {"output"},
                     [](C c) {
                       const Tensor grad = to(c.grad(), c.saved("output").dtype());
                       const Tensor dim_sum = sum(mul(grad, exp(c.saved("output"))), {c.integer("dim")}, true);
                       return sub(grad, dim_sum);
                     }},
                    {"output", {"output", "grad_output"},
                     [](C c) {
                       const Tensor& output = c.saved("output");
                       const Tensor grad = to(c.grad(), output.dtype());
                       const Tensor e = exp(output);
                       const Tensor minus_sum = neg(sum(c.saved("grad_output"), {c.integer("dim")}, true));
                       return to(mul(mul(minus_sum, e), grad), output.dtype());
                     }}}},
      // - name: nll_loss_forward(...)
      //   self: nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)
      //   target: non_differentiable          output_differentiability: [True, False]
      {.op = "aten::nll_loss_forward",
       .formulas = {{"self", {"self", "target", "weight", "total_weight"},
                     [](C c) {
                       return nll_loss_backward(c.grad(), c.saved("self"), c.saved("target"), c.saved("weight"),
                                                c.integer("reduction"), c.integer("ignore_index"), c.saved("total_weight"));
                     }}},
       .non_differentiable = {"target"}},
      // - name: nll_loss_backward(...)
      //   grad_output: nll_loss(grad, target, weight, reduction, ignore_index)     self: zeros_like(grad)
      //   target: non_differentiable
      {.op = "aten::nll_loss_backward",
       .formulas = {{"grad_output", {"target", "weight"},
                     [](C c) {
                       return std::get<0>(nll_loss_forward(c.grad(), c.saved("target"), c.saved("weight"),
                                                           c.integer("reduction"), c.integer("ignore_index")));
                     }},
                    {"self", zeros_like_grad}},
       .non_differentiable = {"target"}},
  };
}

}  // namespace strata::autograd::formulas
