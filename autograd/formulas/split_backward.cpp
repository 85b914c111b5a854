// autograd/formulas/split_backward.cpp: the node of split.Tensor and split_with_sizes and the Autograd
// kernel that records it. The op returns a Tensor[]: one node takes a gradient for each piece (its
// inputs) and gives self's, which a derivative-table row (one output per Tensor return) does not
// express. Their rows in autograd/formulas/views.cpp say so.
#include "autograd/formulas/split_backward.h"

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// PyTorch's split_backward and split_with_sizes_backward (derivatives.yaml:
// `self: split_with_sizes_backward(grads, split_sizes, dim, self.sym_sizes(), self.options())`): the
// pieces' gradients joined by cat along dim, a piece without one given zeros of its shape and self's
// dtype. split_backward computes the sizes from split_size as the forward did: here the node keeps
// the sizes the forward made, which are the same.
class SplitBackward final : public Node {
 public:
  SplitBackward(const Tensor& self, bool with_sizes, std::int64_t dim)
      : Node(next_sequence_nr()), with_sizes_(with_sizes), self_sizes_(self.sizes()), dtype_(self.dtype()),
        device_(self.device()) {
    dim_ = wrap_dim(dim, self.dim());
    Edge& e = add_next_edge();
    if (self.requires_grad()) assign_gradient_edge(e, self);
  }
  std::string_view name() const override { return with_sizes_ ? "SplitWithSizesBackward0" : "SplitBackward0"; }

  variable_list apply(std::span<Tensor> grads) override {
    variable_list grad_inputs;
    grad_inputs.emplace_back();
    if (!task_should_compute_output(0)) return grad_inputs;
    std::vector<Tensor> all;
    all.reserve(grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].defined()) {
        all.push_back(grads[i]);
        continue;
      }
      DimVector shape(self_sizes_);
      shape[static_cast<std::size_t>(dim_)] = input_metadata(i).sizes[static_cast<std::size_t>(dim_)];
      all.push_back(zeros(shape, {.dtype = dtype_, .device = device_}));
    }
    grad_inputs[0] = cat(all, dim_);
    return grad_inputs;
  }

 private:
  bool with_sizes_;
  DimVector self_sizes_;
  std::int64_t dim_ = 0;
  ScalarType dtype_;
  Device device_;
};

void redispatch_below(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  ExcludeKeyGuard below(DispatchKey::Autograd);
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

}  // namespace

void split_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;  // self, split_size or split_sizes, dim
  const Tensor& self = args[0].to_tensor();
  if (!is_grad_enabled() || !self.requires_grad()) {
    redispatch_below(op, keys, stack);
    if (dispatch_trace_in_use()) [[unlikely]] dispatch_trace_note("autograd: not recorded (no input requires grad)");
    return;
  }
  // The node's checks are the op's: wrap_dim of an out-of-range dim fails as the kernel would.
  const bool with_sizes = op.schema().name() == "split_with_sizes";
  NodePtr node = make_node<SplitBackward>(self, with_sizes, args[2].to_int());
  Tensor base = base_of(self);
  redispatch_below(op, keys, stack);
  std::vector<Tensor>& pieces = stack.back().to_tensor_list();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Tensor& piece = pieces[i];
    if (!piece.defined()) [[unlikely]] {  // Note [A recorded output that is None]
      node->add_undefined_input();
      continue;
    }
    node->add_input_metadata(piece);
    if (!is_floating_point(piece.dtype())) continue;
    set_gradient_edge(piece, Edge{node, static_cast<std::uint32_t>(i)});
    // A wrapper subclass's piece is no kernel's view: it becomes one here (Note [The outputs of a
    // multi-output view], ops/split_ops.cpp).
    make_differentiable_view(piece, Tensor(base));
    if (AutogradMeta* meta = piece.impl()->autograd_meta(); meta && meta->is_view()) meta->view.multi_output = true;
  }
  if (dispatch_trace_in_use()) [[unlikely]]
    dispatch_trace_note(with_sizes ? "autograd: recorded SplitWithSizesBackward0" : "autograd: recorded SplitBackward0");
}

}  // namespace strata::autograd
