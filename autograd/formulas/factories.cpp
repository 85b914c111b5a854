// autograd/formulas/factories.cpp: the derivative rows of clone, _to_copy, the fills, copy_, the random fills, the factories (no gradient): PyTorch's
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

std::vector<DerivativeRow> factory_rows() {
  const auto non_differentiable = [](std::string_view op, std::string_view overload = "") {
    return DerivativeRow{.op = op, .overload = overload, .kind = D::NonDifferentiable};
  };
  return {
      // - name: clone(Tensor self, *, MemoryFormat? memory_format=None)   self: grad
      {.op = "aten::clone", .formulas = {{"self", identity}}},
      // - name: _to_copy(...)   self: _to_copy_backward(grad, self.options())
      {.op = "aten::_to_copy", .formulas = {{"self", [](C c) { return to(c.grad(), c.dtype("self")); }}},
       .geometry = {"self"}},
      // - name: fill_.Scalar(Tensor(a!) self, Scalar value)   self: zeros_like(grad)
      // The third fill entry in derivatives.yaml (after fill.Scalar and fill.Tensor), hence 2.
      {.op = "aten::fill_", .overload = "Scalar", .node_name = "FillBackward2", .formulas = {{"self", zeros_like_grad}}},
      // - name: zero_(Tensor(a!) self)   self: zeros_like(grad)
      {.op = "aten::zero_", .formulas = {{"self", zeros_like_grad}}},
      // copy_ is CopyBackwards in PyTorch (a hand-written node): self gets zeros, src gets grad.
      {.op = "aten::copy_", .node_name = "CopyBackwards", .formulas = {{"self", zeros_like_grad}, {"src", identity}}},
      {.op = "aten::normal_", .formulas = {{"self", zeros_like_grad}}},
      {.op = "aten::uniform_", .formulas = {{"self", zeros_like_grad}}},
      // - name: bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None)   self: zeros_like(grad)
      // The third bernoulli entry in derivatives.yaml (after bernoulli and bernoulli_.Tensor), hence 2.
      {.op = "aten::bernoulli_", .overload = "float", .node_name = "BernoulliBackward2", .formulas = {{"self", zeros_like_grad}}},
      // - name: exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None)   self: zeros_like(grad)
      {.op = "aten::exponential_", .formulas = {{"self", zeros_like_grad}}},
      // - name: multinomial(...)   output_differentiability: [False]
      non_differentiable("aten::multinomial"),
      // Outputs that never require grad.
      non_differentiable("aten::empty", "memory_format"),
      non_differentiable("aten::zeros"),
      non_differentiable("aten::ones"),
      non_differentiable("aten::full"),
      non_differentiable("aten::arange"),
      non_differentiable("aten::arange", "start"),
      non_differentiable("aten::arange", "start_step"),
      non_differentiable("aten::empty_like"),
      non_differentiable("aten::ones_like"),
      non_differentiable("aten::zeros_like"),
      non_differentiable("aten::new_empty_strided"),
      non_differentiable("aten::randn"),
      non_differentiable("aten::randn", "generator"),
      non_differentiable("aten::rand"),
      non_differentiable("aten::rand", "generator"),
      non_differentiable("aten::randint"),
      non_differentiable("aten::randint", "generator"),
      non_differentiable("aten::randint", "low"),
      non_differentiable("aten::randint", "low_generator"),
      // - name: lift_fresh(Tensor(a) self) -> Tensor(a)   self: grad
      // It returns self, so its output is its input, with the input's own history: recording
      // upstream's node would give the input itself a grad_fn. tensor() lifts only fresh tensors,
      // which never require grad (Note [A tensor from values is lifted], ops/tensor_literal.h).
      non_differentiable("aten::lift_fresh"),
      non_differentiable("profiler::_record_function_enter_new"),
      non_differentiable("profiler::_record_function_exit", "_RecordFunction"),
  };
}

}  // namespace strata::autograd::formulas
