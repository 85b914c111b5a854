// autograd/formula_node.cpp: recording a forward call and running a row's formula.
#include "autograd/formula_node.h"

#include "autograd/variable.h"
#include "core/function_schema.h"

namespace strata::autograd {

FormulaNode::FormulaNode(const ResolvedRow& row, const IValue* args)
    : Node(next_sequence_nr()), row_(row), saved_(row.saved_args.size(), SavedVariable()) {
  for (std::uint8_t i : row.input_args) add_next_edge(requires_grad_at(args, i) ? gradient_edge(args[i].to_tensor()) : Edge{});
}

void FormulaNode::record_arguments(const IValue* args, const Tensor* original_self) {
  const std::size_t n = row_.op.schema().arguments().size();
  for (std::size_t i = 0; i < n; ++i) {
    if (args[i].is_tensor()) args_.emplace_back();
    else args_.emplace_back(args[i]);
  }
  for (std::uint8_t i : row_.geometry_args) {
    const Tensor& t = args[i].to_tensor();
    geometry_.push_back(TensorGeometry{DimVector(t.sizes()), DimVector(t.strides()), t.dtype()});
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
  variable_list grad_inputs(num_outputs(), Tensor());
  bool any_grad = false;
  for (const Tensor& g : grads) any_grad = any_grad || g.defined();
  if (!any_grad) return grad_inputs;  // PyTorch's any_grad_defined: every input gets an undefined gradient
  const BackwardContext ctx(*this, grads);
  for (const auto& [f, slot] : row_.formula_order)  // Note [Formulas run in input-name order]
    if (should_compute_output(slot)) grad_inputs[slot] = f->formula(ctx);
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

namespace {
// Formulas name arguments with literals from the same file as the row, so the pointers usually match.
bool same_name(std::string_view a, std::string_view b) { return a.data() == b.data() || a == b; }

std::size_t position_in(const std::vector<std::string_view>& names, std::string_view name) {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (same_name(names[k], name)) return k;
  return names.size();
}
}  // namespace

// ---- BackwardContext ----

Tensor BackwardContext::saved(std::string_view name) const {
  const std::size_t k = position_in(node_.row_.row->saved, name);
  STRATA_INTERNAL_ASSERT(k < node_.saved_.size(), node_.name(), ": ", name, " was not saved");
  const SavedVariable& s = node_.saved_[k];
  return s.needs_saved_for() ? s.unpack(&node_) : s.unpack();
}

const IValue& BackwardContext::arg(std::string_view name) const { return node_.args_[static_cast<std::size_t>(node_.argument_index(name))]; }

namespace {
const TensorGeometry& geometry_of(const FormulaNode& node, const SmallVector<TensorGeometry, 2>& geometry,
                                  std::string_view name) {
  const std::size_t k = position_in(node.row().row->geometry, name);
  STRATA_INTERNAL_ASSERT(k < geometry.size(), node.name(), ": ", name, " has no recorded geometry (add it to the row's geometry)");
  return geometry[k];
}
}  // namespace

IntArrayRef BackwardContext::sizes(std::string_view name) const { return geometry_of(node_, node_.geometry_, name).sizes; }
IntArrayRef BackwardContext::strides(std::string_view name) const { return geometry_of(node_, node_.geometry_, name).strides; }
ScalarType BackwardContext::dtype(std::string_view name) const { return geometry_of(node_, node_.geometry_, name).dtype; }

}  // namespace strata::autograd
