// autograd/formulas/inference_ops.cpp: the derivative rows of activations (sigmoid, tanh, gelu), softmax, mean, max, argmax, sort, topk, gather, scatter, embedding, dropout: PyTorch's
// tools/autograd/derivatives.yaml entry quoted above each row, its formulas written with the same
// helper calls (and so the same dispatched ops). Rows and their Notes: autograd/derivative_table.h.
#include <array>
#include <limits>
#include <optional>

#include "autograd/formula_node.h"
#include "autograd/formulas/functions_manual.h"
#include "autograd/formulas/rows.h"
#include "autograd/grad_mode.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"

namespace strata::autograd::formulas {

namespace {

// PyTorch's infinitely_differentiable_silu_backward: grad_output * s * (1 + self * (1 - s)) with
// s = sigmoid(self), in ops that are differentiable again (silu's backward while grad mode is on).
// 1 - s is C++'s `1.0 - s`, empty_like(s).fill_(1).sub_(s); the right operand of each product runs
// first (Note [An op's operands are dispatched in a written order]).
Tensor infinitely_differentiable_silu_backward(const Tensor& grad_output, const Tensor& self) {
  const Tensor s = sigmoid(self);
  const Tensor one_minus_s = sub_(fill_(empty_like(s), 1.0), s);
  const Tensor factor = add(mul(self, one_minus_s), Scalar(1.0));
  const Tensor scaled = mul(grad_output, s);
  return mul(scaled, factor);
}

}  // namespace

namespace {
// The row of an op whose values keep `dim` (sort, topk): its gradient goes back to where `indices` say.
DerivativeRow kept_dim_selection_row(std::string_view op) {
  return {.op = op,
          .formulas = {{"self", {"indices"},
                        [](C c) {
                          return value_selecting_reduction_backward(c.grad(), c.integer("dim"), c.saved("indices"),
                                                                    c.sizes("self"), true);
                        }}},
          .geometry = {"self"}};
}

}  // namespace

std::vector<DerivativeRow> inference_rows() {
  // The scale native_dropout's row passes, exactly as derivatives.yaml writes it: 1 unless train is
  // given and true (so train=None, which trains, gets 1: the yaml's own expression).
  return {
      // - name: sigmoid(Tensor self) -> Tensor   self: sigmoid_backward(grad, result)
      {.op = "aten::sigmoid",
       .formulas = {{"self", {"result"}, [](C c) { return sigmoid_backward(c.grad(), c.saved("result")); }}}},
      // - name: sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
      //   grad_output: sigmoid_backward(grad, output.conj())
      //   output: grad.conj() * grad_output * (-2 * output.conj() + 1)
      {.op = "aten::sigmoid_backward",
       .formulas = {{"grad_output", {"output"}, [](C c) { return sigmoid_backward(c.grad(), c.saved("output")); }},
                    {"output", {"output", "grad_output"},
                     [](C c) {
                       const Tensor factor = add(mul(c.saved("output"), Scalar(-2)), Scalar(1));
                       return mul(mul(c.grad(), c.saved("grad_output")), factor);
                     }}}},
      // - name: tanh(Tensor self) -> Tensor   self: tanh_backward(grad, result)
      {.op = "aten::tanh",
       .formulas = {{"self", {"result"}, [](C c) { return tanh_backward(c.grad(), c.saved("result")); }}}},
      // - name: tanh_backward(Tensor grad_output, Tensor output) -> Tensor
      //   grad_output: tanh_backward(grad, output.conj())
      //   output: grad.conj() * (-2 * output.conj() * grad_output).conj()
      {.op = "aten::tanh_backward",
       .formulas = {{"grad_output", {"output"}, [](C c) { return tanh_backward(c.grad(), c.saved("output")); }},
                    {"output", {"output", "grad_output"},
                     [](C c) { return mul(c.grad(), mul(mul(c.saved("output"), Scalar(-2)), c.saved("grad_output"))); }}}},
      // - name: silu(Tensor self) -> Tensor
      //   self: "GradMode::is_enabled() ? infinitely_differentiable_silu_backward(grad, self) : silu_backward(grad, self)"
      {.op = "aten::silu",
       .formulas = {{"self", {"self"},
                     [](C c) {
                       if (is_grad_enabled()) return infinitely_differentiable_silu_backward(c.grad(), c.saved("self"));
                       return silu_backward(c.grad(), c.saved("self"));
                     }}}},
      // silu_backward has no derivatives.yaml entry: a NotImplemented node, whose backward fails.
      {.op = "aten::silu_backward", .node_name = "NotImplemented",
       .formulas = {{"grad_output", not_implemented_node<"aten::silu_backward">}, {"self", not_implemented_node<"aten::silu_backward">}}},
      // - name: gelu(Tensor self, *, str approximate='none') -> Tensor
      //   self: gelu_backward(grad, self, approximate)
      {.op = "aten::gelu",
       .formulas = {{"self", {"self"},
                     [](C c) { return gelu_backward(c.grad(), c.saved("self"), c.arg("approximate").to_string_view()); }}}},
      // - name: gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor
      //   grad_output: gelu_backward(grad, self, approximate)
      //   self: gelu_double_backward(grad, grad_output, self, approximate)
      {.op = "aten::gelu_backward",
       .formulas = {{"grad_output", {"self"},
                     [](C c) { return gelu_backward(c.grad(), c.saved("self"), c.arg("approximate").to_string_view()); }},
                    {"self", {"grad_output", "self"},
                     [](C c) {
                       return gelu_double_backward(c.grad(), c.saved("grad_output"), c.saved("self"),
                                                   c.arg("approximate").to_string_view());
                     }}}},
      // - name: _softmax(Tensor self, int dim, bool half_to_float) -> Tensor
      //   self: _softmax_backward_data(grad, result, dim, self.scalar_type())
      softmax_row<_softmax_backward_data>("aten::_softmax"),
      // - name: _softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
      //   grad_output: _softmax_backward_data(grad.to(output.dtype()), output, dim, input_dtype)
      //   output: softmax_double_backward(grad.to(output.dtype()), grad_output, dim, output).to(output.dtype())
      {.op = "aten::_softmax_backward_data",
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
      {.op = "aten::mean",
       .formulas = {{"self",
                     [](C c) {
                       const IntArrayRef sizes = c.sizes("self");
                       return div(expand(c.grad(), sizes), Scalar(numel_of(sizes)));  // Tensor / SymInt: div.Scalar
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
      {.op = "aten::max", .overload = "dim",
       .formulas = {{"self", {"indices"},
                     [](C c) {
                       return value_selecting_reduction_backward(c.grad(), c.integer("dim"), c.saved("indices"),
                                                                 c.sizes("self"), c.arg("keepdim").to_bool());
                     }}},
       .geometry = {"self"}},
      // - name: sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
      //   self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), true)
      //   output_differentiability: [True, False]
      kept_dim_selection_row("aten::sort"),
      // - name: topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
      //   self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), true)
      //   output_differentiability: [True, False]
      kept_dim_selection_row("aten::topk"),
      // - name: gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
      //   self: gather_backward(grad, self, dim, index, sparse_grad)    index: non_differentiable
      {.op = "aten::gather",
       .formulas = {{"self", {"index"},
                     [](C c) {
                       return gather_backward(c.grad(), c.sizes("self"), c.integer("dim"), c.saved("index"),
                                              c.arg("sparse_grad").to_bool());
                     }}},
       .geometry = {"self"},
       .non_differentiable = {"index"}},
      // - name: scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
      //   self: grad.scatter(dim, index, 0)    index: non_differentiable    src: grad.gather(dim, index)
      {.op = "aten::scatter", .overload = "src",
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
      {.op = "aten::scatter_add",
       .formulas = {{"self", identity},
                    {"src", {"index"}, [](C c) { return gather(c.grad(), c.integer("dim"), c.saved("index")); }}},
       .non_differentiable = {"index"}},
      // argmax, eq, isnan, logical_and and logical_or_ return integers and bools:
      // output_differentiability [False].
      {.op = "aten::argmax", .kind = D::NonDifferentiable},
      {.op = "aten::eq", .overload = "Tensor", .kind = D::NonDifferentiable},
      {.op = "aten::isnan", .kind = D::NonDifferentiable},
      {.op = "aten::logical_and", .kind = D::NonDifferentiable},
      {.op = "aten::logical_or_", .kind = D::NonDifferentiable},
      // - name: embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False)
      //   indices: non_differentiable
      //   weight: embedding_backward_symint(grad, indices, weight.sym_size(0), padding_idx, scale_grad_by_freq, sparse)
      {.op = "aten::embedding",
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
      {.op = "aten::embedding_dense_backward",
       .formulas = {{"grad_output", {"indices"},
                     [](C c) { return embedding_dense_double_backward(c.grad(), c.saved("indices"), c.integer("padding_idx")); }}},
       .non_differentiable = {"indices"}},
      // - name: native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
      //   input: "GradMode::is_enabled() ? infinitely_differentiable_native_dropout_backward(grad, result1, (!train.has_value() ||
      //          !train.value() ? 1 : (p == 1 ? 0.0 : 1.0 / (1.0 - p)))) : native_dropout_backward(grad, result1, <the same>)"
      {.op = "aten::native_dropout",
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
      {.op = "aten::native_dropout_backward",
       .formulas = {{"grad_output", {"grad_output", "mask"},
                     [](C c) {
                       return native_dropout_double_backward(c.grad(), c.saved("grad_output"), c.saved("mask"),
                                                             c.arg("scale").to_double());
                     }}}},
      // - name: native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
      //   input, weight, bias: "grad.defined() ? native_layer_norm_backward_symint(grad, input, normalized_shape, result1,
      //                         result2, weight, bias, grad_input_mask) : std::tuple<Tensor, Tensor, Tensor>()"
      // One formula for the three inputs (Note [One formula for several inputs]).
      {.op = "aten::native_layer_norm",
       .formulas = {{"input, weight, bias", {"input", "result1", "result2", "weight", "bias"},
                     [](C c) -> variable_list {
                       if (!c.grad().defined()) return {Tensor(), Tensor(), Tensor()};
                       const std::array<bool, 3> mask{c.grad_input_mask(0), c.grad_input_mask(1), c.grad_input_mask(2)};
                       auto [dx, dw, db] = native_layer_norm_backward(
                           c.grad(), c.saved("input"), c.arg("normalized_shape").to_int_list(), c.saved("result1"),
                           c.saved("result2"), c.saved("weight"), c.saved("bias"), mask);
                       return {std::move(dx), std::move(dw), std::move(db)};
                     }}}},
      // - name: native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
      //   input, weight, grad_out: layer_norm_double_backward(input, weight, grads[0], grads[1], grads[2], grad_out, mean, rstd, normalized_shape, grad_input_mask)
      //   bias: Tensor()
      //   mean, rstd: non_differentiable
      // One formula for three inputs, as native_layer_norm's (Note [One formula for several inputs]).
      {.op = "aten::native_layer_norm_backward",
       .formulas = {{"bias", [](C) { return Tensor(); }},
                    {"input, weight, grad_out", {"input", "weight", "grad_out", "mean", "rstd"},
                     [](C c) -> variable_list {
                       auto [gI, gG, ggO] = layer_norm_double_backward(
                           c.saved("input"), c.saved("weight"), c.grad(0), c.grad(1), c.grad(2), c.saved("grad_out"),
                           c.saved("mean"), c.saved("rstd"), c.arg("normalized_shape").to_int_list());
                       return {std::move(gI), std::move(gG), std::move(ggO)};
                     }}},
       .outputs = {0, 1, 2},
       .non_differentiable = {"mean", "rstd"}},
  };
}

}  // namespace strata::autograd::formulas
