// autograd/formula_node.cpp: recording a forward call and running a row's formula.
#include "autograd/formula_node.h"

#include "core/function_schema.h"

namespace strata::autograd {

FormulaNode::FormulaNode(const ResolvedRow& row, edge_list next_edges)
    : Node(next_sequence_nr(), std::move(next_edges)), row_(row), saved_(row.saved_args.size(), SavedVariable()) {}

void FormulaNode::record_arguments(const IValue* args, const Tensor* original_self) {
  const std::size_t n = row_.op.schema().arguments().size();
  for (std::size_t i = 0; i < n; ++i) args_.emplace_back(args[i].is_tensor() ? IValue() : args[i]);
  for (std::uint8_t i : row_.tensor_args) {
    const IValue& v = args[i];
    TensorGeometry g;
    if (v.is_tensor()) {
      const Tensor& t = v.to_tensor();
      g = TensorGeometry{DimVector(t.sizes()), DimVector(t.strides()), t.dtype()};
    }
    geometry_.push_back(std::move(g));
  }
  for (std::size_t k = 0; k < row_.saved_args.size(); ++k) {
    const int arg = row_.saved_args[k];
    if (arg < 0) continue;  // an output, saved after the call
    const bool use_original = arg == 0 && original_self != nullptr;
    const IValue& v = args[arg];
    if (use_original) saved_[k] = SavedVariable(*original_self, false);
    else if (v.is_tensor()) saved_[k] = SavedVariable(v.to_tensor(), false);
  }
}

void FormulaNode::save_outputs(const IValue* returns) {
  for (std::size_t k = 0; k < row_.saved_returns.size(); ++k) {
    const int ret = row_.saved_returns[k];
    if (ret >= 0) saved_[k] = SavedVariable(returns[ret].to_tensor(), true);
  }
}

variable_list FormulaNode::apply(variable_list&& grads) {
  variable_list grad_inputs(num_outputs());
  BackwardContext ctx(*this, grads, grad_inputs);
  row_.row->backward(ctx);
  return grad_inputs;
}

void FormulaNode::release_variables() {
  for (SavedVariable& s : saved_) s.reset();
}

int FormulaNode::argument_index(std::string_view arg_name) const {
  const int i = row_.op.schema().argument_index(arg_name);
  STRATA_INTERNAL_ASSERT(i >= 0, name(), ": no argument named ", arg_name);
  return i;
}

std::size_t FormulaNode::input_slot(std::string_view arg_name) const {
  const int arg = argument_index(arg_name);
  for (std::size_t k = 0; k < row_.input_args.size(); ++k)
    if (row_.input_args[k] == arg) return k;
  STRATA_INTERNAL_ASSERT(false, name(), ": ", arg_name, " is not a differentiable input");
  return 0;
}

// ---- BackwardContext ----

Tensor BackwardContext::saved(std::string_view name) const {
  const auto& names = node_.row_.row->saved;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return node_.saved_[k].unpack(node_.shared_from_this());
  STRATA_INTERNAL_ASSERT(false, node_.name(), ": ", name, " was not saved");
  return Tensor();
}

const IValue& BackwardContext::arg(std::string_view name) const { return node_.args_[static_cast<std::size_t>(node_.argument_index(name))]; }

namespace {
const TensorGeometry& geometry_of(const FormulaNode& node, const SmallVector<TensorGeometry, 3>& geometry, int arg) {
  const auto& tensor_args = node.row().tensor_args;
  for (std::size_t k = 0; k < tensor_args.size(); ++k)
    if (tensor_args[k] == arg) return geometry[k];
  STRATA_INTERNAL_ASSERT(false, "argument ", arg, " of ", node.name(), " is not a tensor");
  return geometry[0];
}
}  // namespace

IntArrayRef BackwardContext::sizes(std::string_view name) const {
  return geometry_of(node_, node_.geometry_, node_.argument_index(name)).sizes;
}
IntArrayRef BackwardContext::strides(std::string_view name) const {
  return geometry_of(node_, node_.geometry_, node_.argument_index(name)).strides;
}
ScalarType BackwardContext::dtype(std::string_view name) const {
  return geometry_of(node_, node_.geometry_, node_.argument_index(name)).dtype;
}

bool BackwardContext::needs(std::string_view name) const {
  bool any_grad = false;
  for (const Tensor& g : grads_) any_grad = any_grad || g.defined();
  return any_grad && node_.should_compute_output(node_.input_slot(name));
}

void BackwardContext::set(std::string_view name, Tensor grad) { grad_inputs_[node_.input_slot(name)] = std::move(grad); }

}  // namespace strata::autograd
