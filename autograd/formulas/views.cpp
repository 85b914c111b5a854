// autograd/formulas/views.cpp: the derivative rows of view ops (t, transpose, permute, view...), select/slice/diagonal backwards, cat, stack, detach: PyTorch's
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

std::vector<DerivativeRow> view_rows() {
  return {
      // - name: t(Tensor(a) self) -> Tensor(a)         self: grad.t()
      {.op = "aten::t", .formulas = {{"self", [](C c) { return t(c.grad()); }}}},
      // - name: transpose.int(...)                       self: grad.transpose(dim0, dim1)
      {.op = "aten::transpose", .overload = "int",
       .formulas = {{"self", [](C c) { return transpose(c.grad(), c.integer("dim0"), c.integer("dim1")); }}}},
      // - name: permute(Tensor(a) self, int[] dims) -> Tensor(a)   self: permute_backwards(grad, dims)
      {.op = "aten::permute",
       .formulas = {{"self", [](C c) { return permute_backwards(c.grad(), c.arg("dims").to_int_list()); }}}},
      // - name: view(Tensor(a) self, SymInt[] size)      self: grad.reshape_symint(self.sym_sizes())
      {.op = "aten::view",
       .formulas = {{"self", [](C c) { return reshape(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: _unsafe_view(Tensor self, SymInt[] size)   self: grad.reshape_symint(self.sym_sizes())
      {.op = "aten::_unsafe_view",
       .formulas = {{"self", [](C c) { return reshape(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: expand(...)                              self: at::sum_to(grad, self.sym_sizes())
      {.op = "aten::expand",
       .formulas = {{"self", [](C c) { return sum_to(c.grad(), c.sizes("self")); }}}, .geometry = {"self"}},
      // - name: unsqueeze(Tensor(a) self, int dim)       self: grad.squeeze(dim)
      {.op = "aten::unsqueeze",
       .formulas = {{"self", [](C c) { return squeeze(c.grad(), c.integer("dim")); }}}},
      // - name: squeeze.dim(Tensor(a) self, int dim)     self: unsqueeze_to(grad, dim, self.sym_sizes())
      {.op = "aten::squeeze", .overload = "dim", .node_name = "SqueezeBackward1",
       .formulas = {{"self", [](C c) { return unsqueeze_to(c.grad(), c.integer("dim"), c.sizes("self")); }}},
       .geometry = {"self"}},
      // - name: as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
      //   self: as_strided_backward(grad, self_geometry, size, stride, storage_offset)
      {.op = "aten::as_strided",
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
      {.op = "aten::select", .overload = "int",
       .formulas = {{"self", [](C c) { return select_backward(c.grad(), c.sizes("self"), c.integer("dim"), c.integer("index")); }}},
       .geometry = {"self"}},
      // - name: slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
      //   self: slice_backward_wrapper(grad, self.sym_sizes(), dim, start, end, step)
      {.op = "aten::slice", .overload = "Tensor",
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
      {.op = "aten::select_backward",
       .formulas = {{"grad_output", [](C c) { return select(c.grad(), c.integer("dim"), c.integer("index")); }}}},
      // - name: slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor
      //   grad_output: grad.slice_symint(dim, start, end, step)
      {.op = "aten::slice_backward",
       .formulas = {{"grad_output",
                     [](C c) { return slice(c.grad(), c.integer("dim"), c.integer("start"), c.integer("end"), c.integer("step")); }}}},
      // - name: diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
      //   self: diagonal_backward_symint(grad, self.sym_sizes(), offset, dim1, dim2)
      {.op = "aten::diagonal",
       .formulas = {{"self",
                     [](C c) {
                       return diagonal_backward(c.grad(), c.sizes("self"), c.integer("offset"), c.integer("dim1"),
                                                c.integer("dim2"));
                     }}},
       .geometry = {"self"}},
      // - name: diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor
      //   grad_output: grad.diagonal(offset, dim1, dim2)
      {.op = "aten::diagonal_backward",
       .formulas = {{"grad_output",
                     [](C c) { return diagonal(c.grad(), c.integer("offset"), c.integer("dim1"), c.integer("dim2")); }}}},
      // - name: constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
      //   self: constant_pad_nd_backward(grad, pad)
      {.op = "aten::constant_pad_nd",
       .formulas = {{"self", [](C c) { return constant_pad_nd_backward(c.grad(), c.arg("pad").to_int_list()); }}}},
      // - name: cat(Tensor[] tensors, int dim=0) -> Tensor
      //   tensors: cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)
      // One edge per tensor of the list: recorded by cat's own kernel (autograd/formulas/cat_backward.h).
      {.op = "aten::cat", .kind = D::Kernel},
      // - name: stack(Tensor[] tensors, int dim=0) -> Tensor
      //   tensors: stack_tensors_backward(grad, dim, to_args_scalartypes(tensors))
      // One edge per tensor of the list, as cat's: recorded by stack's own kernel.
      {.op = "aten::stack", .kind = D::Kernel},
      // - name: split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
      //   self: split_backward(grads, split_size, dim, self.sym_sizes(), self.options())
      // A Tensor[] of views, one node for all: recorded by split's own kernel (autograd/formulas/split_backward.h).
      {.op = "aten::split", .overload = "Tensor", .kind = D::Kernel},
      // - name: split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
      //   self: split_with_sizes_backward(grads, split_sizes, dim, self.sym_sizes(), self.options())
      {.op = "aten::split_with_sizes", .kind = D::Kernel},
      // - name: detach(Tensor(a) self)                   output_differentiability: [False]
      {.op = "aten::detach", .kind = D::NonDifferentiable},
  };
}

}  // namespace strata::autograd::formulas
