// autograd/formulas/rows.h: the derivative table's rows by op family (one file each here, beside the
// ops/native/ family files), and the small formulas several families share. derivative_rows()
// (autograd/derivative_table.cpp) gathers them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "../derivative_table.h"
#include "../../ops/functions.h"

namespace strata::autograd::formulas {

// Note [An op's operands are dispatched in a written order]
// No call in strata's library code (a function, a constructor, an overloaded operator such as a * b)
// has two operands that each dispatch an op: the operand that runs first is a named temporary, then
// the call takes it. C++ leaves the order in which a call's arguments, and the operands of * / + -,
// are evaluated to the compiler: gcc evaluates these right to left, clang left to right, so
// mul(neg(grad), div(a, b)) dispatched the divs first in a gcc build and neg first in a clang one,
// and what modes and OpCounter see depended on the compiler. The written order is PyTorch's where
// PyTorch has the formula (its C++, built with gcc, runs the right operand first: -grad * (a / b)
// runs the divs, then neg), and gcc's order where strata's formula is its own. A braced list
// {f(), g()}, a.f(g()) and the operands of << >> && || = are sequenced by the standard and need
// nothing. tests/autograd/test_dispatch_order.cpp pins the sequence of every formula and composite
// (tests/golden/dispatch_order_strata.json, recorded from a gcc build) and runs in the clang build.

using D = Differentiability;
using C = const BackwardContext&;

// `grad` itself (PyTorch's `self: grad`, and handle_r_to_c(self.scalar_type(), grad) for real dtypes:
// the engine casts and sum_to's the result).
inline Tensor identity(C c) { return c.grad(); }
// `self: zeros_like(grad)` (ops that overwrite self, so no gradient reaches its old value).
inline Tensor zeros_like_grad(C c) { return zeros_like(c.grad()); }
// PyTorch's NotImplemented node (torch/csrc/autograd/functions/basic_ops.h): what its generated code
// records for an op without a derivatives.yaml entry whose inputs require grad. `not_implemented_node<"mm">`.
template <std::size_t N>
struct OpName {
  char text[N];
  constexpr OpName(const char (&name)[N]) { std::copy_n(name, N, text); }
};
template <OpName Name>
[[noreturn]] Tensor not_implemented_node(C) {
  throw Error(strata::detail::str_cat("derivative for ", Name.text, " is not implemented"));
}
// The row of _softmax or _log_softmax, whose derivatives.yaml entries are one formula with its own
// backward op: `self: _softmax_backward_data(grad, result, dim, self.scalar_type())`. BackwardData is
// that op's front end.
template <auto BackwardData>
DerivativeRow softmax_row(std::string_view op) {
  return {.op = op,
          .formulas = {{"self", {"result"},
                        [](C c) { return BackwardData(c.grad(), c.saved("result"), c.integer("dim"), c.dtype("self")); }}},
          .geometry = {"self"}};
}
// An `int[]?` argument as the C++ front ends take it.
inline std::optional<IntArrayRef> optional_ints(const IValue& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int_list();
}

std::vector<DerivativeRow> view_rows();
std::vector<DerivativeRow> pointwise_rows();
std::vector<DerivativeRow> linalg_and_reduction_rows();
std::vector<DerivativeRow> softmax_and_loss_rows();
std::vector<DerivativeRow> factory_rows();
std::vector<DerivativeRow> inference_rows();
std::vector<DerivativeRow> math_and_mask_rows();

}  // namespace strata::autograd::formulas
