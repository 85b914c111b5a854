// autograd/formula_node.cpp: recording a forward call and running a row's formula.
#include "autograd/formula_node.h"

#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "core/interpose/interposer.h"
#include "core/dispatch/function_schema.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {
// The tensor through which `x`, an input of an in-place op on `self`, sees the op's write, or an
// undefined tensor: x itself when it is self, shares self's storage, or is a differentiable view of
// self's base (a wrapper has no storage); a wrapper's inner tensor that does, for a wrapper.
// Note [An input the write reaches is saved without a reference].
Tensor seen_through_write(const Tensor& x, const Tensor& self) {
  if (x.is_same(self)) return x;
  const TensorImpl& impl = *x.impl();
  if (impl.storage() && impl.storage() == self.impl()->storage()) return x;
  if (const ViewInfo* view = view_info(x)) {
    const Tensor self_base = base_of(self);
    if (view->base.is_same(self) || view->base.is_same(self_base)) return x;
  }
  if (TensorSubclass* subclass = x.subclass()) {
    for (const Tensor& inner : subclass->flatten(x).inner)
      if (inner.defined())
        if (Tensor seen = seen_through_write(inner, self); seen.defined()) return seen;
  }
  return Tensor();
}
}  // namespace

FormulaNode::FormulaNode(const ResolvedRow& row, const IValue* args)
    : Node(next_sequence_nr()), row_(row) {
  for (std::uint8_t i : row.input_args) {
    Edge& e = add_next_edge();
    if (requires_grad_at(args, i)) assign_gradient_edge(e, args[i].to_tensor());
  }
  // If something throws, the members made so far destroy what they hold.
  for (std::uint8_t i : row.recorded_args) args_.emplace_back(args[i]);
  for (std::uint8_t i : row.geometry_args) geometry_.emplace_back(args[i].to_tensor());
  // Inputs are saved as themselves, except what only a formula that will not run reads, and `self`
  // of an in-place op, which is saved as it was: a clone, made through Autograd as PyTorch's
  // original_self = self.clone() is, so a self that requires grad keeps its history in it and the
  // formula's own gradient (create_graph) reaches self. Note [A formula declares the tensors it reads].
  for (std::size_t k = 0; k < row.saved_args.size(); ++k) {
    const std::int8_t arg = row.saved_args[k];
    const std::int8_t guard = row.saved_guards[k];
    if (arg < 0 || !args[arg].is_tensor() || (guard >= 0 && !should_compute_output(static_cast<std::size_t>(guard)))) {
      saved_.emplace_back();  // an output (saved after the call), None, or not needed
    } else if (arg == 0 && row.inplace) {
      saved_.emplace_back(clone(args[0].to_tensor()), false);
    } else if (Tensor seen; row.inplace && (seen = seen_through_write(args[arg].to_tensor(), args[0].to_tensor())).defined()) {
      saved_.emplace_back().save_written(seen);
    } else {
      saved_.emplace_back(args[arg].to_tensor(), false);
    }
  }
}

void FormulaNode::save_named_outputs(const IValue* returns) {
  for (std::size_t k = 0; k < row_.saved_returns.size(); ++k) {
    const int ret = row_.saved_returns[k];
    if (ret >= 0) saved_[k].save(returns[ret].to_tensor(), true);  // the constructor left slot k empty
  }
}

variable_list FormulaNode::apply(std::span<Tensor> grads) {
  // One undefined gradient per output, added one at a time: filling copies of an undefined tensor
  // compiles to a memset call, which costs more than the one to three stores it replaces.
  variable_list grad_inputs;
  for (std::size_t i = num_outputs(); i > 0; --i) grad_inputs.emplace_back();
  bool any_grad = false;
  for (const Tensor& g : grads) any_grad = any_grad || g.defined();
  if (!any_grad) return grad_inputs;  // PyTorch's any_grad_defined: every input gets an undefined gradient
  for (const ResolvedRow::OrderedFormula& f : row_.formula_order) {  // Note [Formulas run in input-name order]
    if (!f.formula->multi_formula) {
      if (task_should_compute_output(f.slot)) grad_inputs[f.slot] = f.formula->formula(BackwardContext(*this, grads, f.reads));
      continue;
    }
    // Note [One formula for several inputs]: runs once, for whichever of its inputs need a gradient.
    std::uint32_t mask = 0;
    for (std::size_t k = 0; k < f.slots.size(); ++k)
      if (task_should_compute_output(f.slots[k])) mask |= 1u << k;
    if (mask == 0) continue;
    variable_list results = f.formula->multi_formula(BackwardContext(*this, grads, f.reads, mask));
    STRATA_INTERNAL_ASSERT(results.size() == f.slots.size(), name(), ": a formula of ", f.slots.size(), " inputs returned ",
                           results.size(), " gradients");
    for (std::size_t k = 0; k < f.slots.size(); ++k)
      if (mask >> k & 1u) grad_inputs[f.slots[k]] = std::move(results[k]);
  }
  return grad_inputs;
}

void detail::throw_unrecorded(const Node& node, std::string_view before, std::string_view name, std::string_view after) {
  strata::detail::throw_internal("the row records every name its formulas read", __FILE__, __LINE__,
                                 strata::detail::str_cat(node.name(), ": ", before, name, after));
}

bool FormulaNode::saves_a_modified_tensor() const {
  for (const SavedVariable& saved : saved_)
    if (saved.was_modified()) return true;
  return false;
}

std::vector<std::pair<std::string, std::vector<std::int64_t>>> FormulaNode::saved_sizes() const {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  const FunctionSchema& schema = row_.op.schema();
  for (std::size_t k = 0; k < saved_.size(); ++k) {
    if (!saved_[k].was_saved()) continue;
    Tensor t;
    try {
      t = saved_[k].unpack(const_cast<FormulaNode*>(this));
    } catch (const Error&) {  // released, or modified in place since
      continue;
    }
    if (!t.defined()) continue;
    const std::int8_t arg = row_.saved_args[k];
    const std::int8_t ret = row_.saved_returns[k];
    // An output is named as derivatives.yaml names it: the schema's return name, else "result"
    // ("result0", "result1"... among several).
    std::string name;
    if (arg >= 0) name = schema.arguments()[static_cast<std::size_t>(arg)].name;
    else if (!schema.returns()[static_cast<std::size_t>(ret)].name.empty()) name = schema.returns()[static_cast<std::size_t>(ret)].name;
    else name = schema.returns().size() == 1 ? std::string("result") : "result" + std::to_string(ret);
    out.emplace_back(std::move(name), std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()));
  }
  return out;
}

void FormulaNode::release_variables() {
  for (SavedVariable& saved : saved_) saved.reset();
}

}  // namespace strata::autograd
