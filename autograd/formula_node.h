// autograd/formula_node.h: the one node class behind every derivative-table row. It keeps what its
// row asks for (saved tensors, the forward call's other arguments, the geometry of tensor inputs)
// and runs the row's formula. PyTorch generates one class per op; a table row plays that role here.
#pragma once

#include "derivative_table.h"
#include "saved_variable.h"

namespace strata::autograd {

// Sizes, strides, storage offset and dtype of a tensor input at forward time (PyTorch's
// TensorGeometry and options). The tensor's own packed sizes and strides are copied whole (an inline
// geometry is one fixed-size copy) rather than into two DimVectors (Note [Sizes and strides share one
// buffer]).
struct TensorGeometry {
  explicit TensorGeometry(const Tensor& t)
      : geometry(t.impl()->sizes_and_strides()), storage_offset(t.storage_offset()), dtype(t.dtype()) {}
  SizesAndStrides geometry;
  std::int64_t storage_offset;
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
  // saved later, by save_outputs, in the slots this leaves for them), each only if a formula that will
  // run reads it. An in-place row saves self as it was, a clone (PyTorch's original_self), made through
  // Autograd as PyTorch's is (Note [A formula declares the tensors it reads]).
  FormulaNode(const ResolvedRow& row, const IValue* args);
  std::string_view name() const override { return row_.row->node_name; }
  variable_list apply(std::span<Tensor> grads) override;
  void release_variables() override;

  const ResolvedRow& row() const { return row_; }
  // Whether a tensor this node saved was modified in place since (SavedVariable::was_modified): its
  // backward would fail, and the saved tensor may be what holds a graph in a reference cycle.
  bool saves_a_modified_tensor() const;
  // The sizes of the tensors this node holds for its formulas, by PyTorch's attribute names without
  // "_saved_" ("mat2", "self", "result"), for a drawing of the graph; none once released.
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> saved_sizes() const;
  // Saves the outputs the row names, from the op's returns (inline: most rows save none).
  void save_outputs(const IValue* returns) {
    if (row_.saves_outputs) save_named_outputs(returns);
  }

 private:
  friend class BackwardContext;

  void save_named_outputs(const IValue* returns);
  std::size_t num_args() const { return args_.size(); }
  std::size_t num_geometry() const { return geometry_.size(); }
  std::size_t num_saved() const { return saved_.size(); }

  // Inline room for what every row of the table records (kInline*, autograd/derivative_table.h).
  const ResolvedRow& row_;
  SmallVector<IValue, kInlineRecordedArgs> args_;              // per row().recorded_args entry (the non-tensor arguments)
  SmallVector<TensorGeometry, kInlineRecordedGeometry> geometry_;  // per row().geometry_args entry
  SmallVector<SavedVariable, kInlineSavedVariables> saved_;        // per row().row->saved name
};

// ---- BackwardContext ----
// Inline: formulas read a few dozen names a training step, and a call per name cost more than the
// lookup itself.

namespace detail {
// Where `name` is among a row's names, by hash (Note [Formulas name what they read; rows resolve the
// names once]); hashes.size() if it is not there.
inline std::size_t position_in(const SmallVector<std::uint32_t, 8>& hashes, ArgName name) {
  std::size_t k = 0;
  while (k < hashes.size() && hashes[k] != name.hash()) ++k;
  return k;
}
// The internal error of a formula reading a name its row does not record: "<node>: <before><name><after>".
// A plain cold call, not STRATA_INTERNAL_ASSERT, whose lambda kept the name in memory on every read.
[[noreturn, gnu::cold, gnu::noinline]] void throw_unrecorded(const Node& node, std::string_view before, std::string_view name,
                                                             std::string_view after);
}  // namespace detail

inline Tensor BackwardContext::saved(ArgName name) const {
  // k is the name's slot, or one past the last when it is no saved name (below 32: resolve_saved),
  // and a formula's mask has no bit there: one test refuses both.
  const std::size_t k = detail::position_in(node_.row_.saved_hashes, name);
  if (!(reads_ >> k & 1u)) [[unlikely]]
    detail::throw_unrecorded(node_, "", name.str(), " is not among the saved tensors this formula declares it reads");
  return node_.saved_[k].unpack(&node_);  // the node is the history of a saved output
}

inline const IValue& BackwardContext::arg(ArgName name) const {
  const std::size_t i = detail::position_in(node_.row_.argument_hashes, name);
  if (i >= node_.num_args()) [[unlikely]] detail::throw_unrecorded(node_, "no non-tensor argument named ", name.str(), "");
  return node_.args_[i];
}

inline const TensorGeometry& BackwardContext::geometry(ArgName name) const {
  const std::size_t k = detail::position_in(node_.row_.geometry_hashes, name);
  if (k >= node_.num_geometry()) [[unlikely]]
    detail::throw_unrecorded(node_, "", name.str(), " has no recorded geometry (add it to the row's geometry)");
  return node_.geometry_[k];
}

inline IntArrayRef BackwardContext::sizes(ArgName name) const { return geometry(name).geometry.sizes(); }
inline IntArrayRef BackwardContext::strides(ArgName name) const { return geometry(name).geometry.strides(); }
inline ScalarType BackwardContext::dtype(ArgName name) const { return geometry(name).dtype; }
inline std::int64_t BackwardContext::storage_offset(ArgName name) const { return geometry(name).storage_offset; }

}  // namespace strata::autograd
