// autograd/derivative_table.cpp: resolving rows against schemas.
#include "autograd/derivative_table.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "autograd/formulas/rows.h"

namespace strata::autograd {

namespace {

// Appends the hash of `name`, checking that no name before it in `hashes` shares it
// (Note [Formulas name what they read; rows resolve the names once]).
void add_hash(SmallVector<std::uint32_t, 8>& hashes, std::string_view name, std::string_view node_name) {
  const std::uint32_t h = hash_name(name);
  STRATA_INTERNAL_ASSERT(std::find(hashes.begin(), hashes.end(), h) == hashes.end(), node_name, ": two names hash alike, ", name);
  hashes.push_back(h);
}

int return_index(const FunctionSchema& schema, std::string_view name) {
  const auto& rets = schema.returns();
  for (std::size_t i = 0; i < rets.size(); ++i) {
    const std::string& ret_name = rets[i].name;
    if (ret_name == name) return static_cast<int>(i);
    if (ret_name.empty() && (name == "result" + std::to_string(i) || (i == 0 && name == "result"))) return static_cast<int>(i);
  }
  return -1;
}

// "input, weight, bias" -> {"input", "weight", "bias"} (Note [One formula for several inputs]).
std::vector<std::string_view> input_names(std::string_view text) {
  std::vector<std::string_view> names;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(", ", start);
    names.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return names;
    start = comma + 2;
  }
}

// Whether PyTorch's code generator would guard the saving of a tensor only one formula reads
// (gen_variable_type.py's guard_for; Note [A formula declares the tensors it reads]): not in a row of
// a "backward" op, not when the row has a single formula, and only for a plain `Tensor` argument.
bool may_guard(const ResolvedRow& row, const FunctionSchema& schema, int arg) {
  if (schema.name().find("backward") != std::string::npos || row.input_args.size() <= 1 || arg < 0) return false;
  const SchemaType& type = schema.arguments()[static_cast<std::size_t>(arg)].type;
  return type.is_tensor_like() && !type.optional && !type.list;
}

// The row's saved names (the union of its formulas' reads), each formula's mask of them, and the
// guard of each.
void resolve_saved(ResolvedRow& resolved, const FunctionSchema& schema) {
  const DerivativeRow& row = *resolved.row;
  std::vector<std::string_view> names;
  for (const InputFormula& f : row.formulas)
    for (std::string_view name : f.reads)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  // BackwardContext::saved tests bit k of a 32-bit mask, k up to the number of names.
  STRATA_INTERNAL_ASSERT(names.size() < 32, row.node_name, ": saves more than 31 tensors (a formula's reads are a 32-bit mask)");
  for (std::string_view name : names) {
    const int arg = schema.argument_index(name);
    const int ret = arg >= 0 ? -1 : return_index(schema, name);
    STRATA_INTERNAL_ASSERT(arg >= 0 || ret >= 0, row.node_name, ": nothing named ", name, " to save");
    const std::uint32_t bit = 1u << resolved.saved_args.size();
    int readers = 0;
    std::int8_t reader_slot = -1;
    bool multi_reader = false;  // guard_for leaves a formula of several inputs unguarded
    for (ResolvedRow::OrderedFormula& f : resolved.formula_order) {
      if (std::find(f.formula->reads.begin(), f.formula->reads.end(), name) == f.formula->reads.end()) continue;
      f.reads |= bit;
      ++readers;
      reader_slot = static_cast<std::int8_t>(f.slot);
      multi_reader = multi_reader || f.formula->multi_formula;
    }
    resolved.saved_args.push_back(static_cast<std::int8_t>(arg));
    resolved.saved_returns.push_back(static_cast<std::int8_t>(ret));
    resolved.saved_guards.push_back(readers == 1 && !multi_reader && may_guard(resolved, schema, arg) ? reader_slot : std::int8_t{-1});
    add_hash(resolved.saved_hashes, name, row.node_name);
  }
}

// Note [Node names are derived]
// A row's node is named as PyTorch's code generator names it (load_derivatives.py): the op's name
// without a trailing underscore (an in-place op shares its functional form's node), in CamelCase,
// "Forward" dropped, then "Backward" and the entry's index among derivatives.yaml's entries of that
// name: sigmoid -> SigmoidBackward0, nll_loss_forward -> NllLossBackward0, _softmax ->
// SoftmaxBackward0. A row names its node only where that index is not 0 (add.Scalar is
// AddBackward1, after add.Tensor's AddBackward0) or where PyTorch's node is not of the pattern
// (copy_'s CopyBackwards).
std::string default_node_name(std::string_view op) {
  std::string_view name = op.substr(op.find("::") + 2);
  if (name.ends_with('_')) name.remove_suffix(1);  // an in-place op's node is its functional form's
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  if (out.ends_with("Forward")) out.resize(out.size() - 7);
  return out + "Backward0";
}

}  // namespace

std::vector<DerivativeRow> derivative_rows() {
  using namespace formulas;
  std::vector<DerivativeRow> rows;
  for (auto part : {view_rows(), pointwise_rows(), linalg_and_reduction_rows(), softmax_and_loss_rows(), factory_rows(),
                    inference_rows(), math_and_mask_rows()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

void DerivativeTable::add(const std::vector<DerivativeRow>& rows) {
  for (DerivativeRow row : rows) {
    if (row.node_name.empty()) row.node_name = *derived_names_.emplace_back(std::make_unique<std::string>(default_node_name(row.op)));
    rows_.push_back(row);
  }
  by_op_.assign(Dispatcher::singleton().ops().size(), ResolvedRow{});
  for (const DerivativeRow& row : rows_) {
    const std::optional<OperatorHandle> op = Dispatcher::singleton().find(row.op, row.overload);
    STRATA_INTERNAL_ASSERT(op.has_value(), "derivative row for unknown op ", row.op, ".", row.overload);
    const FunctionSchema& schema = op->schema();
    ResolvedRow resolved;
    resolved.row = &row;
    resolved.op = *op;
    // Edges in schema order; formulas in name order (Note [Formulas run in input-name order]).
    // (schema position, formula, which of the formula's names) per input a formula names.
    std::vector<std::tuple<int, const InputFormula*, std::size_t>> by_position;
    for (const InputFormula& f : row.formulas) {
      STRATA_INTERNAL_ASSERT(f.formula || f.multi_formula, row.node_name, ": no formula for ", f.input);
      const std::vector<std::string_view> names = input_names(f.input);
      STRATA_INTERNAL_ASSERT((names.size() > 1) == (f.multi_formula != nullptr) && names.size() <= 32, row.node_name,
                             ": one formula per input, or a formula of several inputs for several (", f.input, ")");
      for (std::size_t k = 0; k < names.size(); ++k) {
        const int i = schema.argument_index(names[k]);
        STRATA_INTERNAL_ASSERT(i >= 0, row.node_name, ": no argument named ", names[k]);
        by_position.emplace_back(i, &f, k);
      }
    }
    std::sort(by_position.begin(), by_position.end());
    for (const auto& entry : by_position) resolved.input_args.push_back(static_cast<std::uint8_t>(std::get<0>(entry)));
    for (std::size_t slot = 0; slot < by_position.size(); ++slot) {
      const InputFormula* f = std::get<1>(by_position[slot]);
      ResolvedRow::OrderedFormula* it = std::find_if(resolved.formula_order.begin(), resolved.formula_order.end(),
                                                     [f](const ResolvedRow::OrderedFormula& o) { return o.formula == f; });
      if (it == resolved.formula_order.end())
        it = &resolved.formula_order.emplace_back(ResolvedRow::OrderedFormula{f, static_cast<std::uint8_t>(slot), 0, {}});
      if (!f->multi_formula) continue;
      const std::size_t k = std::get<2>(by_position[slot]);
      if (it->slots.size() <= k) it->slots.resize(k + 1);
      it->slots[k] = static_cast<std::uint8_t>(slot);
    }
    std::sort(resolved.formula_order.begin(), resolved.formula_order.end(),
              [](const auto& a, const auto& b) { return a.formula->input < b.formula->input; });
    resolve_saved(resolved, schema);
    for (std::string_view name : row.geometry) {
      const int i = schema.argument_index(name);
      STRATA_INTERNAL_ASSERT(i >= 0 && schema.arguments()[static_cast<std::size_t>(i)].type.is_tensor_like(), row.node_name,
                             ": no tensor argument named ", name);
      resolved.geometry_args.push_back(static_cast<std::uint8_t>(i));
      add_hash(resolved.geometry_hashes, name, row.node_name);
    }
    for (std::string_view name : row.non_differentiable)
      STRATA_INTERNAL_ASSERT(schema.argument_index(name) >= 0, row.node_name, ": no argument named ", name);
    // Non-tensor arguments are recorded; tensor arguments of a Formula row with neither a formula nor a
    // non_differentiable mark may not require grad (Note [Arguments without a formula]).
    for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
      const SchemaArgument& argument = schema.arguments()[i];
      const auto position = static_cast<std::uint8_t>(i);
      if (argument.type.is_tensor_like()) {
        const bool has_formula = std::find(resolved.input_args.begin(), resolved.input_args.end(), position) != resolved.input_args.end();
        const bool marked = std::find(row.non_differentiable.begin(), row.non_differentiable.end(), argument.name) !=
                            row.non_differentiable.end();
        if (row.kind == Differentiability::Formula && !has_formula && !marked) resolved.no_grad_args.push_back(position);
        continue;
      }
      resolved.recorded_args.push_back(position);
      add_hash(resolved.argument_hashes, argument.name, row.node_name);
    }
    resolved.inplace = !schema.arguments().empty() && schema.arguments()[0].type.is_write();
    resolved.is_view = schema.returns().size() == 1 && !schema.arguments().empty() &&
                       !schema.arguments()[0].type.alias.empty() && !schema.arguments()[0].type.is_write() &&
                       schema.returns()[0].type.alias == schema.arguments()[0].type.alias;
    resolved.aliases_self = resolved.inplace || resolved.is_view;
    STRATA_INTERNAL_ASSERT(!resolved.aliases_self || row.kind != Differentiability::Formula ||
                               (schema.returns().size() == 1 && row.outputs == std::vector<int>{0}),
                           row.node_name, ": an in-place or view op has one differentiable output, its first return");
    resolved.kind = row.kind;
    resolved.saves_outputs = std::any_of(resolved.saved_returns.begin(), resolved.saved_returns.end(), [](std::int8_t r) { return r >= 0; });
    resolved.num_arguments = static_cast<std::uint32_t>(schema.arguments().size());
    resolved.num_returns = static_cast<std::uint32_t>(schema.returns().size());
    STRATA_INTERNAL_ASSERT(!by_op_[op->index()].row, "two derivative rows for ", op->str());
    by_op_[op->index()] = std::move(resolved);
  }
}

std::vector<const ResolvedRow*> DerivativeTable::rows() const {
  std::vector<const ResolvedRow*> out;
  for (const ResolvedRow& r : by_op_)
    if (r.row) out.push_back(&r);
  return out;
}

constinit DerivativeTable detail::the_derivative_table;

}  // namespace strata::autograd
