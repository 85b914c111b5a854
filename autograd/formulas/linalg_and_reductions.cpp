// autograd/formulas/linalg_and_reductions.cpp: the derivative rows of mm, addmm, bmm, baddbmm, dot, mv, _scaled_mm (not implemented, as upstream), sum, cumsum, flip: PyTorch's
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

std::vector<DerivativeRow> linalg_and_reduction_rows() {
  return {
      // - name: mm(Tensor self, Tensor mat2)
      //   self: mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), self.layout(), 1)
      //   mat2: mm_mat2_backward(grad, self, mat2.sym_sizes(), mat2.sym_strides(), mat2.layout(), 1)
      {.op = "aten::mm",
       .formulas = {{"self", {"mat2"}, [](C c) { return mm_mat1_backward(c.grad(), c.saved("mat2"), c.sizes("self"), c.strides("self"), 1); }},
                    {"mat2", {"self"}, [](C c) { return mm_mat2_backward(c.grad(), c.saved("self"), c.sizes("mat2"), c.strides("mat2"), 1); }}},
       .geometry = {"self", "mat2"}},
      // - name: addmm(...)   self: maybe_multiply(grad, beta.conj())
      //   mat1: mm_mat1_backward(grad, mat2, mat1.sym_sizes(), mat1.sym_strides(), mat1.layout(), alpha)
      //   mat2: mm_mat2_backward(grad, mat1, mat2.sym_sizes(), mat2.sym_strides(), mat2.layout(), alpha)
      {.op = "aten::addmm",
       .formulas = {{"self", [](C c) { return maybe_multiply(c.grad(), c.scalar("beta")); }},
                    {"mat1", {"mat2"},
                     [](C c) {
                       return mm_mat1_backward(c.grad(), c.saved("mat2"), c.sizes("mat1"), c.strides("mat1"), c.scalar("alpha"));
                     }},
                    {"mat2", {"mat1"},
                     [](C c) {
                       return mm_mat2_backward(c.grad(), c.saved("mat1"), c.sizes("mat2"), c.strides("mat2"), c.scalar("alpha"));
                     }}},
       .geometry = {"mat1", "mat2"}},
      // - name: bmm(Tensor self, Tensor mat2) -> Tensor
      //   self: grad.bmm(mat2.transpose(1, 2).conj())
      //   mat2: self.transpose(1, 2).conj().bmm(grad)
      // (conj() of a real tensor is the tensor itself and dispatches nothing.)
      {.op = "aten::bmm",
       .formulas = {{"self", {"mat2"}, [](C c) { return bmm(c.grad(), transpose(c.saved("mat2"), 1, 2)); }},
                    {"mat2", {"self"}, [](C c) { return bmm(transpose(c.saved("self"), 1, 2), c.grad()); }}}},
      // - name: baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
      //   self: maybe_multiply(grad, beta.conj())
      //   batch1: maybe_multiply(grad.bmm(batch2.transpose(1, 2).conj()), alpha.conj())
      //   batch2: maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad), alpha.conj())
      {.op = "aten::baddbmm",
       .formulas = {{"self", [](C c) { return maybe_multiply(c.grad(), c.scalar("beta")); }},
                    {"batch1", {"batch2"},
                     [](C c) { return maybe_multiply(bmm(c.grad(), transpose(c.saved("batch2"), 1, 2)), c.scalar("alpha")); }},
                    {"batch2", {"batch1"},
                     [](C c) { return maybe_multiply(bmm(transpose(c.saved("batch1"), 1, 2), c.grad()), c.scalar("alpha")); }}}},
      // - name: dot(Tensor self, Tensor tensor) -> Tensor
      //   self: grad * tensor.conj()
      //   tensor: grad * self.conj()
      {.op = "aten::dot",
       .formulas = {{"self", {"tensor"}, [](C c) { return mul(c.grad(), c.saved("tensor")); }},
                    {"tensor", {"self"}, [](C c) { return mul(c.grad(), c.saved("self")); }}}},
      // - name: mv(Tensor self, Tensor vec) -> Tensor
      //   self: grad.ger(vec.conj())
      //   vec: self.conj().t().mv(grad)
      // ger is outer, grad.reshape({grad.size(0), 1}) * vec: a view and a mul under a mode.
      {.op = "aten::mv",
       .formulas = {{"self", {"vec"},
                     [](C c) {
                       const Tensor column = reshape(c.grad(), {c.grad().size(0), 1});
                       return mul(column, c.saved("vec"));
                     }},
                    {"vec", {"self"}, [](C c) { return mv(t(c.saved("self")), c.grad()); }}}},
      // _scaled_mm has no derivatives.yaml entry: the forward runs and records a NotImplemented node,
      // whose backward fails, as PyTorch's generated code does.
      {.op = "aten::_scaled_mm", .node_name = "NotImplemented",
       .formulas = {{"bias", not_implemented_node<"_scaled_mm">},
                    {"mat2", not_implemented_node<"_scaled_mm">},
                    {"scale_a", not_implemented_node<"_scaled_mm">},
                    {"scale_b", not_implemented_node<"_scaled_mm">},
                    {"scale_result", not_implemented_node<"_scaled_mm">},
                    {"self", not_implemented_node<"_scaled_mm">}}},
      // - name: sum.dim_IntList(...)   self: sum_backward(grad, self.sym_sizes(), dim, keepdim)
      {.op = "aten::sum", .overload = "dim_IntList", .node_name = "SumBackward1",
       .formulas = {{"self",
                     [](C c) {
                       return sum_backward(c.grad(), c.sizes("self"), optional_ints(c.arg("dim")), c.arg("keepdim").to_bool());
                     }}},
       .geometry = {"self"}},
      // - name: sum(Tensor self, *, ScalarType? dtype=None)   self: grad.expand_symint(self.sym_sizes())
      {.op = "aten::sum", .formulas = {{"self", [](C c) { return expand(c.grad(), c.sizes("self")); }}},
       .geometry = {"self"}},
      // - name: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
      //   self: cumsum_backward(grad.to(self.scalar_type()), dim)
      {.op = "aten::cumsum",
       .formulas = {{"self", [](C c) { return cumsum_backward(to(c.grad(), c.dtype("self")), c.arg("dim").to_int()); }}},
       .geometry = {"self"}},
      // - name: flip(Tensor self, int[] dims) -> Tensor
      //   self: grad.flip(dims)
      {.op = "aten::flip", .formulas = {{"self", [](C c) { return flip(c.grad(), c.arg("dims").to_int_list()); }}}},
  };
}

}  // namespace strata::autograd::formulas
