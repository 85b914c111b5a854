// autograd/formula_node.h: the one node class behind every derivative-table row. It keeps what its
// row asks for (saved tensors, the forward call's other arguments, the geometry of tensor inputs)
// and runs the row's formula. PyTorch generates one class per op; a table row plays that role here.
#pragma once

#include "autograd/derivative_table.h"
#include "autograd/row_slots.h"
#include "autograd/saved_variable.h"

namespace strata::autograd {

// Sizes, strides and dtype of a tensor input at forward time.
struct TensorGeometry {
  explicit TensorGeometry(const Tensor& t) : sizes(t.sizes()), strides(t.strides()), dtype(t.dtype()) {}
  DimVector sizes;
  DimVector strides;
  ScalarType dtype;
};

// Whether the forward call's argument args[i] is a defined tensor that requires grad.
inline bool requires_grad_at(const IValue* args, std::uint8_t i) {
  const IValue& v = args[i];
  return v.is_tensor() && v.to_tensor().defined() && v.to_tensor().requires_grad();
}

class FormulaNode final : public Node {
 public:
  // Records the forward call `args` of the row's op: edges to the gradient edges of the row's inputs,
  // the non-tensor arguments, the geometry the row names, and the input tensors it saves (outputs are
  // saved later, by save_outputs, in the slots this leaves for them). For an in-place row that reads
  // self as it was, self is saved as a clone (PyTorch's self.clone()), made below Autograd.
  FormulaNode(const ResolvedRow& row, const IValue* args);
  ~FormulaNode() override;
  std::string_view name() const override { return row_.row->node_name; }
  variable_list apply(std::span<Tensor> grads) override;
  void release_variables() override;

  const ResolvedRow& row() const { return row_; }
  // Saves the outputs the row names, from the op's returns (inline: most rows save none).
  void save_outputs(const IValue* returns) {
    if (row_.saves_outputs) save_named_outputs(returns);
  }

 private:
  friend class BackwardContext;

  void save_named_outputs(const IValue* returns);
  // Slot counts come from the row (Note [A node's slots are sized by its row]).
  std::size_t num_args() const { return row_.recorded_args.size(); }
  std::size_t num_geometry() const { return row_.geometry_args.size(); }
  std::size_t num_saved() const { return row_.saved_args.size(); }

  const ResolvedRow& row_;
  RowSlots<IValue, kMaxRecordedArgs> args_;              // per row().recorded_args entry (the non-tensor arguments)
  RowSlots<TensorGeometry, kMaxRecordedGeometry> geometry_;  // per row().geometry_args entry
  RowSlots<SavedVariable, kMaxSavedVariables> saved_;        // per row().row->saved name
};

}  // namespace strata::autograd
