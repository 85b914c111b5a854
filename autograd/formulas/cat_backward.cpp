// autograd/formulas/cat_backward.cpp: the nodes of cat and stack, CatBackward0 and StackBackward0, and the
// Autograd kernel that records them. Their differentiable input is a Tensor[]: one edge per element,
// which a derivative-table row (one edge per tensor argument) does not express. Their rows in
// autograd/formulas/ say so.
#include "autograd/formulas/cat_backward.h"

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// A node with one edge per tensor of a Tensor[] (none for one that does not require grad).
class ListBackward : public Node {
 protected:
  explicit ListBackward(TensorList tensors) : Node(next_sequence_nr()) {
    for (const Tensor& t : tensors) {
      Edge& e = add_next_edge();
      if (t.defined() && t.requires_grad()) assign_gradient_edge(e, t);
    }
  }
};

// PyTorch's cat_tensors_backward: the gradient narrowed to each input's part; a skipped 1-D empty
// input (ops/native/join_ops.cpp) gets zeros of its shape.
class CatBackward final : public ListBackward {
 public:
  static constexpr const char* kRecorded = "autograd: recorded CatBackward0";
  CatBackward(TensorList tensors, std::int64_t dim) : ListBackward(tensors), dim_(dim) {
    for (const Tensor& t : tensors) sizes_.emplace_back(t.sizes());
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

// PyTorch's stack_tensors_backward: the gradient's slice select(dim, i) for input i.
class StackBackward final : public ListBackward {
 public:
  static constexpr const char* kRecorded = "autograd: recorded StackBackward0";
  // Made before stack's own checks run: the dimension is wrapped when the gradient comes.
  StackBackward(TensorList tensors, std::int64_t dim) : ListBackward(tensors), dim_(dim) {}
  std::string_view name() const override { return "StackBackward0"; }

  variable_list apply(std::span<Tensor> grads) override {
    variable_list grad_inputs;
    for (std::size_t i = 0; i < num_outputs(); ++i) grad_inputs.emplace_back();
    const Tensor& grad = grads[0];
    if (!grad.defined()) return grad_inputs;
    const std::int64_t dim = wrap_dim(dim_, grad.dim());
    for (std::size_t i = 0; i < grad_inputs.size(); ++i) grad_inputs[i] = select(grad, dim, static_cast<std::int64_t>(i));
    return grad_inputs;
  }

 private:
  std::int64_t dim_;
};

void redispatch_below(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  ExcludeKeyGuard below(DispatchKey::Autograd);
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

}  // namespace

namespace {

// Records a node of type N, made from (tensors, dim) before the kernel below runs; no node when
// grad mode is off or no tensor of the list requires grad.
template <typename N>
void record_list_node(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
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
  NodePtr node = make_node<N>(TensorList(list.data(), list.size()), args[1].to_int());
  redispatch_below(op, keys, stack);
  const Tensor& out = stack.back().to_tensor();
  if (!out.defined()) [[unlikely]] {  // Note [A recorded output that is None]
    node->add_undefined_input();
    return;
  }
  node->add_input_metadata(out);
  if (is_floating_point(out.dtype())) set_gradient_edge(out, Edge{std::move(node), 0});
  if (dispatch_trace_in_use()) [[unlikely]] dispatch_trace_note(N::kRecorded);
}

}  // namespace

void cat_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  record_list_node<CatBackward>(op, keys, stack);
}

void stack_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  record_list_node<StackBackward>(op, keys, stack);
}

}  // namespace strata::autograd
