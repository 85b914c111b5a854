// autograd/formulas/derivatives.cpp: the derivative table's rows: PyTorch's tools/autograd/derivatives.yaml
// for strata's ops, one row per op, each formula written with the same helper calls (and so the same
// dispatched ops) as the yaml entry quoted above it.
#include <limits>
#include <optional>

#include "autograd/derivative_table.h"
#include "autograd/formula_node.h"
#include "autograd/formulas/functions_manual.h"
#include "autograd/grad_mode.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::autograd {

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

namespace {

using D = Differentiability;
using C = const BackwardContext&;

// `grad` itself (PyTorch's `self: grad`, and handle_r_to_c(self.scalar_type(), grad) for real dtypes:
// the engine casts and sum_to's the result).
Tensor identity(C c) { return c.grad(); }
// `self: zeros_like(grad)` (ops that overwrite self, so no gradient reaches its old value).
Tensor zeros_like_grad(C c) { return zeros_like(c.grad()); }

// PyTorch's NotImplemented node (torch/csrc/autograd/functions/basic_ops.h): what its generated code
// records for an op without a derivatives.yaml entry whose inputs require grad.
[[noreturn]] Tensor scaled_mm_not_implemented(C) {
  throw Error("derivative for _scaled_mm is not implemented");
}

std::optional<IntArrayRef> optional_ints(const IValue& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int_list();
}

std::vector<DerivativeRow> view_rows() {
  return {
      // - name: t(Tensor(a) self) -> Tensor(a)         self: grad.t()
      {.op = "aten::t", .node_name = "TBackward0", .formulas = {{"self", [](C c) { return t(c.grad()); }}}},
      // - name: transpose.int(...)                       self: grad.transpose(dim0, dim1)
      {.op = "aten::transpose", .overload = "int", .node_name = "TransposeBackward0",
       .formulas = {{"self", [](C c) { return transpose(c.grad(), c.integer("dim0"), c.integer("dim1")); }}}},
      // - name: view(Tensor(a) self, SymInt[] size)      self: grad.reshape_symint(self.sym_sizes())
      {.op = "aten::view", .node_name = "ViewBackward0",
       .formulas = {{"self", [](C c) { return reshape(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: _unsafe_view(Tensor self, SymInt[] size)   self: grad.reshape_symint(self.sym_sizes())
      {.op = "aten::_unsafe_view", .node_name = "UnsafeViewBackward0",
       .formulas = {{"self", [](C c) { return reshape(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: expand(...)                              self: at::sum_to(grad, self.sym_sizes())
      {.op = "aten::expand", .node_name = "ExpandBackward0",
       .formulas = {{"self", [](C c) { return sum_to(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: unsqueeze(Tensor(a) self, int dim)       self: grad.squeeze(dim)
      {.op = "aten::unsqueeze", .node_name = "UnsqueezeBackward0",
       .formulas = {{"self", [](C c) { return squeeze(c.grad(), c.integer("dim")); }}}},
      // - name: squeeze.dim(Tensor(a) self, int dim)     self: unsqueeze_to(grad, dim, self.sym_sizes())
      {.op = "aten::squeeze", .overload = "dim", .node_name = "SqueezeBackward1",
       .formulas = {{"self", [](C c) { return unsqueeze_to(c.grad(), c.integer("dim"), c.sizes("self")); }}},
       .geometry = {"self"}},
      // - name: as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
      //   self: as_strided_backward(grad, self_geometry, size, stride, storage_offset)
      {.op = "aten::as_strided", .node_name = "AsStridedBackward0",
       .formulas = {{"self",
                     [](C c) {
                       const IValue& offset = c.arg("storage_offset");
                       return as_strided_backward(c.grad(), c.sizes("self"), c.strides("self"), c.storage_offset("self"),
                                                  c.arg("size").to_int_list(), c.arg("stride").to_int_list(),
                                                  offset.is_none() ? std::nullopt : std::optional<std::int64_t>(offset.to_int()));
                     }}},
       .geometry = {"self"}},
      // - name: select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
      //   self: select_backward_symint(grad, self.sym_sizes(), dim, index)
      {.op = "aten::select", .overload = "int", .node_name = "SelectBackward0",
       .formulas = {{"self", [](C c) { return select_backward(c.grad(), c.sizes("self"), c.integer("dim"), c.integer("index")); }}},
       .geometry = {"self"}},
      // - name: slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
      //   self: slice_backward_wrapper(grad, self.sym_sizes(), dim, start, end, step)
      {.op = "aten::slice", .overload = "Tensor", .node_name = "SliceBackward0",
       .formulas = {{"self",
                     [](C c) {  // slice_backward_wrapper: an absent start is 0, an absent end INT64_MAX
                       const IValue& start = c.arg("start");
                       const IValue& end = c.arg("end");
                       return slice_backward(c.grad(), c.sizes("self"), c.integer("dim"), start.is_none() ? 0 : start.to_int(),
                                             end.is_none() ? std::numeric_limits<std::int64_t>::max() : end.to_int(),
                                             c.integer("step"));
                     }}},
       .geometry = {"self"}},
      // - name: select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor
      //   grad_output: grad.select_symint(dim, index)
      {.op = "aten::select_backward", .node_name = "SelectBackwardBackward0",
       .formulas = {{"grad_output", [](C c) { return select(c.grad(), c.integer("dim"), c.integer("index")); }}}},
      // - name: slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor
      //   grad_output: grad.slice_symint(dim, start, end, step)
      {.op = "aten::slice_backward", .node_name = "SliceBackwardBackward0",
       .formulas = {{"grad_output",
                     [](C c) { return slice(c.grad(), c.integer("dim"), c.integer("start"), c.integer("end"), c.integer("step")); }}}},
      // - name: cat(Tensor[] tensors, int dim=0) -> Tensor
      //   tensors: cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)
      // One edge per tensor of the list: recorded by cat's own kernel (autograd/formulas/cat_backward.h).
      {.op = "aten::cat", .node_name = "CatBackward0", .kind = D::Kernel},
      // - name: stack(Tensor[] tensors, int dim=0) -> Tensor
      //   tensors: stack_tensors_backward(grad, dim, to_args_scalartypes(tensors))
      // One edge per tensor of the list, as cat's: recorded by stack's own kernel.
      {.op = "aten::stack", .node_name = "StackBackward0", .kind = D::Kernel},
      // - name: detach(Tensor(a) self)                   output_differentiability: [False]
      {.op = "aten::detach", .kind = D::NonDifferentiable},
  };
}

std::vector<DerivativeRow> pointwise_rows() {
  // - name: add.Tensor(...)   self: handle_r_to_c(self.scalar_type(), grad)
  //                           other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))
  const std::vector<InputFormula> add_formulas = {{"self", identity},
                                         {"other", [](C c) { return maybe_multiply(c.grad(), c.scalar("alpha")); }}};
  // - name: mul.Tensor(...)   self: mul_tensor_backward(grad, other, self.scalar_type())
  //                           other: mul_tensor_backward(grad, self, other.scalar_type())
  const std::vector<InputFormula> mul_formulas = {{"self", {"other"}, [](C c) { return mul(c.grad(), c.saved("other")); }},
                                         {"other", {"self"}, [](C c) { return mul(c.grad(), c.saved("self")); }}};
  return {
      {.op = "aten::add", .overload = "Tensor", .node_name = "AddBackward0", .formulas = add_formulas},
      {.op = "aten::add_", .overload = "Tensor", .node_name = "AddBackward0", .formulas = add_formulas},
      // - name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
      //   self: handle_r_to_c(self.scalar_type(), grad)
      {.op = "aten::add", .overload = "Scalar", .node_name = "AddBackward1", .formulas = {{"self", identity}}},
      // - name: sub.Tensor(...)   self: handle_r_to_c(self.scalar_type(), grad)
      //                           other: handle_r_to_c(other.scalar_type(), maybe_multiply(-grad, alpha.conj()))
      {.op = "aten::sub", .overload = "Tensor", .node_name = "SubBackward0",
       .formulas = {{"self", identity}, {"other", [](C c) { return maybe_multiply(neg(c.grad()), c.scalar("alpha")); }}}},
      {.op = "aten::mul", .overload = "Tensor", .node_name = "MulBackward0", .formulas = mul_formulas},
      // - name: mul.Scalar(Tensor self, Scalar other)   self: mul_tensor_backward(grad, other, self.scalar_type())
      {.op = "aten::mul", .overload = "Scalar", .node_name = "MulBackward1",
       .formulas = {{"self", [](C c) { return mul(c.grad(), c.scalar("other")); }}}},
      // mul_'s `self` formula reads self as it was before the write: saved as a clone (PyTorch's
      // original_self = self.clone(); Note [A formula declares the tensors it reads]).
      {.op = "aten::mul_", .overload = "Tensor", .node_name = "MulBackward0", .formulas = mul_formulas},
      // - name: div.Tensor(...)   self: div_tensor_self_backward(grad, other, self.scalar_type())
      //                           other: div_tensor_other_backward(grad, self, other)
      {.op = "aten::div", .overload = "Tensor", .node_name = "DivBackward0",
       .formulas = {{"self", {"other"}, [](C c) { return div(c.grad(), c.saved("other")); }},
                    {"other", {"self", "other"},
                     [](C c) {
                       const Tensor other = c.saved("other");
                       // PyTorch runs it first: Note [An op's operands are dispatched in a written order]
                       const Tensor ratio = div(div(c.saved("self"), other), other);
                       return mul(neg(c.grad()), ratio);
                     }}}},
      // - name: div.Scalar(Tensor self, Scalar other)   self: div_tensor_self_backward(grad, other, self.scalar_type())
      // div_.Scalar takes div.Scalar's row (DivBackward1); grad / other is div.Tensor of a wrapped number
      // here, which is what PyTorch's div.Scalar dispatches.
      {.op = "aten::div_", .overload = "Scalar", .node_name = "DivBackward1",
       .formulas = {{"self", [](C c) { return c.grad() / c.scalar("other"); }}}},
      // - name: exp(Tensor self)  self: grad * result.conj()
      {.op = "aten::exp", .node_name = "ExpBackward0",
       .formulas = {{"self", {"result"}, [](C c) { return mul(c.grad(), c.saved("result")); }}}},
      // - name: reciprocal(Tensor self)  self: -grad * (result * result).conj()
      {.op = "aten::reciprocal", .node_name = "ReciprocalBackward0",
       .formulas = {{"self", {"result"},
                     [](C c) {
                       // PyTorch runs it first: Note [An op's operands are dispatched in a written order]
                       const Tensor square = mul(c.saved("result"), c.saved("result"));
                       return mul(neg(c.grad()), square);
                     }}}},
      // - name: neg(Tensor self)  self: grad.neg()
      {.op = "aten::neg", .node_name = "NegBackward0", .formulas = {{"self", [](C c) { return neg(c.grad()); }}}},
      // - name: relu(Tensor self)  self: threshold_backward(grad, result, 0)
      {.op = "aten::relu", .node_name = "ReluBackward0",
       .formulas = {{"self", {"result"}, [](C c) { return threshold_backward(c.grad(), c.saved("result"), 0); }}}},
      // - name: threshold_backward(...)  grad_output: threshold_backward(grad, self, threshold)
      //                                  self: zeros_like(grad)
      {.op = "aten::threshold_backward", .node_name = "ThresholdBackwardBackward0",
       .formulas = {{"grad_output", {"self"}, [](C c) { return threshold_backward(c.grad(), c.saved("self"), c.scalar("threshold")); }},
                    {"self", zeros_like_grad}}},
  };
}

std::vector<DerivativeRow> linalg_and_reduction_rows() {
  return {
      // - name: mm(Tensor self, Tensor mat2)
      //   self: mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), self.layout(), 1)
      //   mat2: mm_mat2_backward(grad, self, mat2.sym_sizes(), mat2.sym_strides(), mat2.layout(), 1)
      {.op = "aten::mm", .node_name = "MmBackward0",
       .formulas = {{"self", {"mat2"}, [](C c) { return mm_mat1_backward(c.grad(), c.saved("mat2"), c.sizes("self"), c.strides("self"), 1); }},
                    {"mat2", {"self"}, [](C c) { return mm_mat2_backward(c.grad(), c.saved("self"), c.sizes("mat2"), c.strides("mat2"), 1); }}},
       .geometry = {"self", "mat2"}},
      // - name: addmm(...)   self: maybe_multiply(grad, beta.conj())
      //   mat1: mm_mat1_backward(grad, mat2, mat1.sym_sizes(), mat1.sym_strides(), mat1.layout(), alpha)
      //   mat2: mm_mat2_backward(grad, mat1, mat2.sym_sizes(), mat2.sym_strides(), mat2.layout(), alpha)
      {.op = "aten::addmm", .node_name = "AddmmBackward0",
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
      // _scaled_mm has no derivatives.yaml entry: the forward runs and records a NotImplemented node,
      // whose backward fails, as PyTorch's generated code does.
      {.op = "aten::_scaled_mm", .node_name = "NotImplemented",
       .formulas = {{"bias", scaled_mm_not_implemented},
                    {"mat2", scaled_mm_not_implemented},
                    {"scale_a", scaled_mm_not_implemented},
                    {"scale_b", scaled_mm_not_implemented},
                    {"scale_result", scaled_mm_not_implemented},
                    {"self", scaled_mm_not_implemented}}},
      // - name: sum.dim_IntList(...)   self: sum_backward(grad, self.sym_sizes(), dim, keepdim)
      {.op = "aten::sum", .overload = "dim_IntList", .node_name = "SumBackward1",
       .formulas = {{"self",
                     [](C c) {
                       return sum_backward(c.grad(), c.sizes("self"), optional_ints(c.arg("dim")), c.arg("keepdim").to_bool());
                     }}},
       .geometry = {"self"}},
      // - name: sum(Tensor self, *, ScalarType? dtype=None)   self: grad.expand_symint(self.sym_sizes())
      {.op = "aten::sum", .node_name = "SumBackward0", .formulas = {{"self", [](C c) { return expand(c.grad(), c.sizes("self")); }}},
       .geometry = {"self"}},
  };
}

std::vector<DerivativeRow> softmax_and_loss_rows() {
  return {
      // - name: _log_softmax(...)   self: _log_softmax_backward_data(grad, result, dim, self.scalar_type())
      {.op = "aten::_log_softmax", .node_name = "LogSoftmaxBackward0",
       .formulas = {{"self", {"result"},
                     [](C c) { return _log_softmax_backward_data(c.grad(), c.saved("result"), c.integer("dim"), c.dtype("self")); }}},
       .geometry = {"self"}},
      // - name: _log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype)
      //   grad_output: grad.to(output.dtype()) - (grad.to(output.dtype()) * output.exp()).sum(dim, true)
      //   output: (-grad_output.sum(dim, true) * output.exp() * grad.to(output.dtype())).to(output.dtype())
      // Each step is a statement (Note [An op's operands are dispatched in a written order]): GCC's
      // order for PyTorch's expression (the right operand of a product first) is what PyTorch 1.13's
      // trace shows: exp, then sum.
      {.op = "aten::_log_softmax_backward_data", .node_name = "LogSoftmaxBackwardDataBackward0",
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
      {.op = "aten::nll_loss_forward", .node_name = "NllLossBackward0",
       .formulas = {{"self", {"self", "target", "weight", "total_weight"},
                     [](C c) {
                       return nll_loss_backward(c.grad(), c.saved("self"), c.saved("target"), c.saved("weight"),
                                                c.integer("reduction"), c.integer("ignore_index"), c.saved("total_weight"));
                     }}},
       .non_differentiable = {"target"}},
      // - name: nll_loss_backward(...)
      //   grad_output: nll_loss(grad, target, weight, reduction, ignore_index)     self: zeros_like(grad)
      //   target: non_differentiable
      {.op = "aten::nll_loss_backward", .node_name = "NllLossBackwardBackward0",
       .formulas = {{"grad_output", {"target", "weight"},
                     [](C c) {
                       return std::get<0>(nll_loss_forward(c.grad(), c.saved("target"), c.saved("weight"),
                                                           c.integer("reduction"), c.integer("ignore_index")));
                     }},
                    {"self", zeros_like_grad}},
       .non_differentiable = {"target"}},
  };
}

std::vector<DerivativeRow> factory_rows() {
  const auto non_differentiable = [](std::string_view op, std::string_view overload = "") {
    return DerivativeRow{.op = op, .overload = overload, .kind = D::NonDifferentiable};
  };
  return {
      // - name: clone(Tensor self, *, MemoryFormat? memory_format=None)   self: grad
      {.op = "aten::clone", .node_name = "CloneBackward0", .formulas = {{"self", identity}}},
      // - name: _to_copy(...)   self: _to_copy_backward(grad, self.options())
      {.op = "aten::_to_copy", .node_name = "ToCopyBackward0", .formulas = {{"self", [](C c) { return to(c.grad(), c.dtype("self")); }}},
       .geometry = {"self"}},
      // - name: fill_.Scalar(Tensor(a!) self, Scalar value)   self: zeros_like(grad)
      // The third fill entry in derivatives.yaml (after fill.Scalar and fill.Tensor), hence 2.
      {.op = "aten::fill_", .overload = "Scalar", .node_name = "FillBackward2", .formulas = {{"self", zeros_like_grad}}},
      // - name: zero_(Tensor(a!) self)   self: zeros_like(grad)
      {.op = "aten::zero_", .node_name = "ZeroBackward0", .formulas = {{"self", zeros_like_grad}}},
      // copy_ is CopyBackwards in PyTorch (a hand-written node): self gets zeros, src gets grad.
      {.op = "aten::copy_", .node_name = "CopyBackwards", .formulas = {{"self", zeros_like_grad}, {"src", identity}}},
      {.op = "aten::normal_", .node_name = "NormalBackward0", .formulas = {{"self", zeros_like_grad}}},
      {.op = "aten::uniform_", .node_name = "UniformBackward0", .formulas = {{"self", zeros_like_grad}}},
      // - name: bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None)   self: zeros_like(grad)
      // The third bernoulli entry in derivatives.yaml (after bernoulli and bernoulli_.Tensor), hence 2.
      {.op = "aten::bernoulli_", .overload = "float", .node_name = "BernoulliBackward2", .formulas = {{"self", zeros_like_grad}}},
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
      non_differentiable("profiler::_record_function_enter_new"),
      non_differentiable("profiler::_record_function_exit", "_RecordFunction"),
  };
}

std::vector<DerivativeRow> inference_rows() {
  // The scale native_dropout's row passes, exactly as derivatives.yaml writes it: 1 unless train is
  // given and true (so train=None, which trains, gets 1: the yaml's own expression).
  return {
      // - name: sigmoid(Tensor self) -> Tensor   self: sigmoid_backward(grad, result)
      {.op = "aten::sigmoid", .node_name = "SigmoidBackward0",
       .formulas = {{"self", {"result"}, [](C c) { return sigmoid_backward(c.grad(), c.saved("result")); }}}},
      // - name: sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
      //   grad_output: sigmoid_backward(grad, output.conj())
      //   output: grad.conj() * grad_output * (-2 * output.conj() + 1)
      {.op = "aten::sigmoid_backward", .node_name = "SigmoidBackwardBackward0",
       .formulas = {{"grad_output", {"output"}, [](C c) { return sigmoid_backward(c.grad(), c.saved("output")); }},
                    {"output", {"output", "grad_output"},
                     [](C c) {
                       const Tensor factor = add(mul(c.saved("output"), Scalar(-2)), Scalar(1));
                       return mul(mul(c.grad(), c.saved("grad_output")), factor);
                     }}}},
      // - name: tanh(Tensor self) -> Tensor   self: tanh_backward(grad, result)
      {.op = "aten::tanh", .node_name = "TanhBackward0",
       .formulas = {{"self", {"result"}, [](C c) { return tanh_backward(c.grad(), c.saved("result")); }}}},
      // - name: tanh_backward(Tensor grad_output, Tensor output) -> Tensor
      //   grad_output: tanh_backward(grad, output.conj())
      //   output: grad.conj() * (-2 * output.conj() * grad_output).conj()
      {.op = "aten::tanh_backward", .node_name = "TanhBackwardBackward0",
       .formulas = {{"grad_output", {"output"}, [](C c) { return tanh_backward(c.grad(), c.saved("output")); }},
                    {"output", {"output", "grad_output"},
                     [](C c) { return mul(c.grad(), mul(mul(c.saved("output"), Scalar(-2)), c.saved("grad_output"))); }}}},
      // - name: gelu(Tensor self, *, str approximate='none') -> Tensor
      //   self: gelu_backward(grad, self, approximate)
      {.op = "aten::gelu", .node_name = "GeluBackward0",
       .formulas = {{"self", {"self"},
                     [](C c) { return gelu_backward(c.grad(), c.saved("self"), c.arg("approximate").to_string_view()); }}}},
      // - name: gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor
      //   grad_output: gelu_backward(grad, self, approximate)
      //   self: gelu_double_backward(grad, grad_output, self, approximate)
      {.op = "aten::gelu_backward", .node_name = "GeluBackwardBackward0",
       .formulas = {{"grad_output", {"self"},
                     [](C c) { return gelu_backward(c.grad(), c.saved("self"), c.arg("approximate").to_string_view()); }},
                    {"self", {"grad_output", "self"},
                     [](C c) {
                       return gelu_double_backward(c.grad(), c.saved("grad_output"), c.saved("self"),
                                                   c.arg("approximate").to_string_view());
                     }}}},
      // - name: _softmax(Tensor self, int dim, bool half_to_float) -> Tensor
      //   self: _softmax_backward_data(grad, result, dim, self.scalar_type())
      {.op = "aten::_softmax", .node_name = "SoftmaxBackward0",
       .formulas = {{"self", {"result"},
                     [](C c) { return _softmax_backward_data(c.grad(), c.saved("result"), c.integer("dim"), c.dtype("self")); }}},
       .geometry = {"self"}},
      // - name: _softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
      //   grad_output: _softmax_backward_data(grad.to(output.dtype()), output, dim, input_dtype)
      //   output: softmax_double_backward(grad.to(output.dtype()), grad_output, dim, output).to(output.dtype())
      {.op = "aten::_softmax_backward_data", .node_name = "SoftmaxBackwardDataBackward0",
       .formulas = {{"grad_output", {"output"},
                     [](C c) {
                       const Tensor& output = c.saved("output");
                       return _softmax_backward_data(to(c.grad(), output.dtype()), output, c.integer("dim"),
                                                     c.arg("input_dtype").to_scalar_type());
                     }},
                    {"output", {"output", "grad_output"},
                     [](C c) {
                       const Tensor& output = c.saved("output");
                       return to(softmax_double_backward(to(c.grad(), output.dtype()), c.saved("grad_output"),
                                                         c.integer("dim"), output),
                                 output.dtype());
                     }}}},
      // - name: mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
      //   self: grad.expand_symint(self.sym_sizes()) / self.sym_numel()
      {.op = "aten::mean", .node_name = "MeanBackward0",
       .formulas = {{"self",
                     [](C c) {
                       const IntArrayRef sizes = c.sizes("self");
                       return div(expand(c.grad(), sizes), ops::wrapped_scalar_tensor(numel_of(sizes)));
                     }}},
       .geometry = {"self"}},
      // - name: mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
      //   self: mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)
      {.op = "aten::mean", .overload = "dim", .node_name = "MeanBackward1",
       .formulas = {{"self",
                     [](C c) {
                       const IntArrayRef sizes = c.sizes("self");
                       return mean_backward(c.grad(), sizes, optional_ints(c.arg("dim")), numel_of(sizes),
                                            c.arg("keepdim").to_bool());
                     }}},
       .geometry = {"self"}},
      // - name: max(Tensor self) -> Tensor   self: evenly_distribute_backward(grad, self, result)
      {.op = "aten::max", .node_name = "MaxBackward1",
       .formulas = {{"self", {"self", "result"},
                     [](C c) { return evenly_distribute_backward(c.grad(), c.saved("self"), c.saved("result")); }}}},
      // - name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
      //   self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)
      {.op = "aten::max", .overload = "dim", .node_name = "MaxBackward0",
       .formulas = {{"self", {"indices"},
                     [](C c) {
                       return value_selecting_reduction_backward(c.grad(), c.integer("dim"), c.saved("indices"),
                                                                 c.sizes("self"), c.arg("keepdim").to_bool());
                     }}},
       .geometry = {"self"}},
      // - name: gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
      //   self: gather_backward(grad, self, dim, index, sparse_grad)    index: non_differentiable
      {.op = "aten::gather", .node_name = "GatherBackward0",
       .formulas = {{"self", {"index"},
                     [](C c) {
                       return gather_backward(c.grad(), c.sizes("self"), c.integer("dim"), c.saved("index"),
                                              c.arg("sparse_grad").to_bool());
                     }}},
       .geometry = {"self"},
       .non_differentiable = {"index"}},
      // - name: scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
      //   self: grad.scatter(dim, index, 0)    index: non_differentiable    src: grad.gather(dim, index)
      {.op = "aten::scatter", .overload = "src", .node_name = "ScatterBackward0",
       .formulas = {{"self", {"index"}, [](C c) { return scatter(c.grad(), c.integer("dim"), c.saved("index"), Scalar(0)); }},
                    {"src", {"index"}, [](C c) { return gather(c.grad(), c.integer("dim"), c.saved("index")); }}},
       .non_differentiable = {"index"}},
      // - name: scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
      //   self: grad.scatter(dim, index, 0)    index: non_differentiable
      {.op = "aten::scatter", .overload = "value", .node_name = "ScatterBackward1",
       .formulas = {{"self", {"index"}, [](C c) { return scatter(c.grad(), c.integer("dim"), c.saved("index"), Scalar(0)); }}},
       .non_differentiable = {"index"}},
      // - name: scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
      //   self: grad    index: non_differentiable    src: grad.gather(dim, index)
      {.op = "aten::scatter_add", .node_name = "ScatterAddBackward0",
       .formulas = {{"self", identity},
                    {"src", {"index"}, [](C c) { return gather(c.grad(), c.integer("dim"), c.saved("index")); }}},
       .non_differentiable = {"index"}},
      // argmax, eq and isnan return integers and bools: output_differentiability [False].
      {.op = "aten::argmax", .kind = D::NonDifferentiable},
      {.op = "aten::eq", .overload = "Tensor", .kind = D::NonDifferentiable},
      {.op = "aten::isnan", .kind = D::NonDifferentiable},
      // - name: embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False)
      //   indices: non_differentiable
      //   weight: embedding_backward_symint(grad, indices, weight.sym_size(0), padding_idx, scale_grad_by_freq, sparse)
      {.op = "aten::embedding", .node_name = "EmbeddingBackward0",
       .formulas = {{"weight", {"indices"},
                     [](C c) {
                       return embedding_backward(c.grad(), c.saved("indices"), c.sizes("weight")[0], c.integer("padding_idx"),
                                                 c.arg("scale_grad_by_freq").to_bool(), c.arg("sparse").to_bool());
                     }}},
       .geometry = {"weight"},
       .non_differentiable = {"indices"}},
      // - name: embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq)
      //   grad_output: embedding_dense_double_backward_symint(grad, indices, padding_idx)
      //   indices: non_differentiable
      {.op = "aten::embedding_dense_backward", .node_name = "EmbeddingDenseBackwardBackward0",
       .formulas = {{"grad_output", {"indices"},
                     [](C c) { return embedding_dense_double_backward(c.grad(), c.saved("indices"), c.integer("padding_idx")); }}},
       .non_differentiable = {"indices"}},
      // - name: native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
      //   input: "GradMode::is_enabled() ? infinitely_differentiable_native_dropout_backward(grad, result1, (!train.has_value() ||
      //          !train.value() ? 1 : (p == 1 ? 0.0 : 1.0 / (1.0 - p)))) : native_dropout_backward(grad, result1, <the same>)"
      {.op = "aten::native_dropout", .node_name = "NativeDropoutBackward0",
       .formulas = {{"input", {"result1"},
                     [](C c) {
                       const IValue& train = c.arg("train");
                       const double p = c.arg("p").to_double();
                       const double scale = train.is_none() || !train.to_bool() ? 1.0 : (p == 1 ? 0.0 : 1.0 / (1.0 - p));
                       if (is_grad_enabled()) return infinitely_differentiable_native_dropout_backward(c.grad(), c.saved("result1"), scale);
                       return native_dropout_backward(c.grad(), c.saved("result1"), scale);
                     }}}},
      // - name: native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
      //   grad_output: "native_dropout_double_backward(grad, grad_output, mask, scale)"
      //   mask: 'not_implemented("native_dropout_backward: mask")'  (a bool mask never requires grad here)
      {.op = "aten::native_dropout_backward", .node_name = "NativeDropoutBackwardBackward0",
       .formulas = {{"grad_output", {"grad_output", "mask"},
                     [](C c) {
                       return native_dropout_double_backward(c.grad(), c.saved("grad_output"), c.saved("mask"),
                                                             c.arg("scale").to_double());
                     }}}},
  };
}

}  // namespace

std::vector<DerivativeRow> derivative_rows() {
  std::vector<DerivativeRow> rows;
  for (auto part : {view_rows(), pointwise_rows(), linalg_and_reduction_rows(), softmax_and_loss_rows(), factory_rows(),
                    inference_rows()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

}  // namespace strata::autograd
