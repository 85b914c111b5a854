// autograd/cat_backward.cpp: cat's node, CatBackward0, and the Autograd kernel that records it.
// cat's differentiable input is a Tensor[]: one edge per element, which a derivative-table row (one
// edge per tensor argument) does not express. Its row in autograd/derivatives.cpp says so.
#include "autograd/cat_backward.h"

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/dispatch_trace.h"
#include "core/local_dispatch_keys.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// PyTorch's cat_tensors_backward: the gradient narrowed to each input's part; a skipped 1-D empty
// input (ops/join_ops.cpp) gets zeros of its shape.
class CatBackward final : public Node {
 public:
  CatBackward(TensorList tensors, std::int64_t dim) : Node(next_sequence_nr()), dim_(dim) {
    for (const Tensor& t : tensors) {
      Edge& e = add_next_edge();
      if (t.defined() && t.requires_grad()) assign_gradient_edge(e, t);
      sizes_.emplace_back(t.sizes());
    }
  }
  std::string_view name() const override { return "CatBackward0"; }

  variable_list apply(std::span<Tensor> grads) override {
    variable_list grad_inputs;
    for (std::size_t i = 0; i < sizes_.size(); ++i) grad_inputs.emplace_back();
    const Tensor& grad = grads[0];
    if (!grad.defined()) return grad_inputs;
    // legacy_cat_wrap_dim: the first input that is not skipped gives the dimensions.
    std::int64_t dim = dim_;
    for (const DimVector& s : sizes_)
      if (!skipped(s)) {
        dim = wrap_dim(dim_, static_cast<std::int64_t>(s.size()));
        break;
      }
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < sizes_.size(); ++i) {
      if (skipped(sizes_[i])) {
        grad_inputs[i] = zeros({0}, {.dtype = grad.dtype()});
        continue;
      }
      const std::int64_t size = sizes_[i][static_cast<std::size_t>(dim)];
      grad_inputs[i] = narrow(grad, dim, offset, size);
      offset += size;
    }
    return grad_inputs;
  }

 private:
  static bool skipped(const DimVector& s) { return s.size() == 1 && s[0] == 0; }
  std::int64_t dim_;
  std::vector<DimVector> sizes_;
};

void redispatch_below(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  ExcludeKeyGuard below(DispatchKey::Autograd);
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

}  // namespace

void cat_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 2;  // tensors, dim
  bool wanted = false;
  if (is_grad_enabled())
    for (const Tensor& t : args[0].to_tensor_list()) wanted = wanted || (t.defined() && t.requires_grad());
  if (!wanted) {
    redispatch_below(op, keys, stack);
    if (dispatch_trace_in_use()) [[unlikely]] dispatch_trace_note("autograd: not recorded (no input requires grad)");
    return;
  }
  const std::vector<Tensor>& list = args[0].to_tensor_list();
  NodePtr node = make_node<CatBackward>(TensorList(list.data(), list.size()), args[1].to_int());
  redispatch_below(op, keys, stack);
  const Tensor& out = stack.back().to_tensor();
  if (!out.defined()) [[unlikely]] {  // Note [A recorded output that is None]
    node->add_undefined_input();
    return;
  }
  node->add_input_metadata(out);
  if (is_floating_point(out.dtype())) set_gradient_edge(out, Edge{std::move(node), 0});
  if (dispatch_trace_in_use()) [[unlikely]] dispatch_trace_note("autograd: recorded CatBackward0");
}

}  // namespace strata::autograd
