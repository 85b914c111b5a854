// autograd/saved_variable.cpp: saving and unpacking (torch/csrc/autograd/saved_variable.cpp).
#include "autograd/saved_variable.h"

#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"

namespace strata::autograd {

void SavedVariable::throw_inference_saved() {
  strata::detail::throw_error(
      "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor "
      "and use it in autograd.");
}

void SavedVariable::save(const Tensor& t, bool is_output) {
  if (!is_output || !t.defined() || t.is_leaf()) return save_as_itself(t);
  if (t.is_inference()) [[unlikely]] throw_inference_saved();
  const std::uint32_t version = t.impl()->version();
  data_ = shallow_copy_and_detach(t);  // PyTorch's tensor_data(); if it throws, this stays empty
  requires_grad_ = t.requires_grad();
  output_nr_ = t.impl()->autograd_meta()->output_nr;
  saved_ = true;
  saved_version_ = version;
}

// Note [An input the write reaches is saved without a reference]
// An in-place op's node becomes the history of the self it wrote (rebase_history). An input saved as
// itself that is self, or that holds self alive (a differentiable view of self's base, a wrapper over
// self), would make that node hold self: a reference cycle that outlives every graph (`mul_(t, t)`).
// PyTorch saves such an input as itself and leaks the cycle; its backward then fails anyway, because
// the input shares self's version counter, which the write bumped. strata keeps the failure and drops
// the cycle: the input is kept as an alias without history or view state (made directly, so no mode
// sees a detach), with the version it had before the write, and unpacking reports the modification
// as PyTorch does, naming the tensor's history: the node, which the write made self's history, or,
// for a differentiable view, AsStridedBackward0 output 0, the history PyTorch regenerates for a view
// whose version moved (Tensor::grad_fn of the view it saved; strata's alias has none). A wrapper
// whose inner tensor is the one written is refused the same way, where PyTorch would compute with the
// written values.
void SavedVariable::save_written(const Tensor& seen_through) {
  saved_version_ = seen_through.impl()->version();
  data_ = strata::detail::make_alias(seen_through);
  requires_grad_ = true;
  output_nr_ = 0;
  saved_ = true;
  written_ = true;
  written_view_ = view_info(seen_through) != nullptr;
}

namespace {
// PyTorch's legacy type names, which its message uses: "torch.FloatTensor" on cpu, "MetaFloatType" on meta.
std::string legacy_type_name(ScalarType dtype, Device device) {
  const std::string_view scalar = dtype_c10_name(dtype);
  return device == Device::Meta ? strata::detail::str_cat("Meta", scalar, "Type") : strata::detail::str_cat("torch.", scalar, "Tensor");
}
}  // namespace

void SavedVariable::throw_modified_error(const Node* saved_for) const {
  // As PyTorch words it: the node is the tensor's history now for a tensor saved as itself, the
  // saving node for a saved output; the output number is only recorded for saved outputs (else 0).
  const Node* producer = saved_original_ ? data_.grad_fn() : saved_for;
  const std::uint32_t output_nr = output_nr_;
  std::ostringstream message;
  message << "one of the variables needed for gradient computation has been modified by an inplace operation: ["
          << legacy_type_name(data_.dtype(), data_.device()) << " " << shape_str(data_.sizes()) << "]";
  if (written_view_) message << ", which is output 0 of AsStridedBackward0,";
  else if (producer) message << ", which is output " << output_nr << " of " << producer->name() << ",";
  message << " is at version " << data_.impl()->version() << "; expected version " << saved_version_
          << " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
             "with torch.autograd.set_detect_anomaly(True).";
  throw Error(message.str());
}

Tensor SavedVariable::unpack_other(Node* saved_for) const {
  if (!saved_) return Tensor();
  STRATA_CHECK(data_.defined(), kBackwardTwiceMessage);
  // An input the write reached through a wrapper's inner tensor may show no new version of its own.
  if (data_.impl()->version() != saved_version_ || written_) [[unlikely]]
    throw_modified_error(saved_for);
  if (saved_original_) return data_;
  // A saved output: rebuild a tensor whose history is the node that saved it (PyTorch's make_variable).
  Tensor var = shallow_copy_and_detach(data_);
  if (saved_for) set_gradient_edge(var, Edge{NodePtr(saved_for), output_nr_});
  else if (requires_grad_) set_requires_grad(var, true);
  return var;
}

}  // namespace strata::autograd
