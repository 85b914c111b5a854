// autograd/derivative_table.h: what autograd knows about each op, keyed like the op table. A row
// names the backward node (PyTorch's "AddmmBackward0"), one formula per input that gets a gradient,
// what to save, written as in derivatives.yaml but in C++ (autograd/formulas/). Ops without
// a gradient are rows too, marked non-differentiable (outputs never require grad) or not implemented
// (recording one throws), so a test can check that every op has exactly one row.
#pragma once

#include <memory>
#include <initializer_list>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "arg_name.h"
#include "node.h"
#include "../core/dispatch/dispatcher.h"

namespace strata::autograd {

class FormulaNode;
struct TensorGeometry;

// What a backward formula sees, by schema name, as in derivatives.yaml
// (Note [Formulas name what they read; rows resolve the names once]). The readers are defined inline in
// autograd/formula_node.h, which a file that runs formulas includes.
class BackwardContext {
 public:
  // `reads`: bit k set when the running formula declared the row's saved name k (InputFormula::reads);
  // `input_mask`: bit k set when the k-th input a formula of several inputs names needs a gradient.
  BackwardContext(FormulaNode& node, std::span<const Tensor> grads, std::uint32_t reads, std::uint32_t input_mask = 1)
      : node_(node), grads_(grads), reads_(reads), input_mask_(input_mask) {}

  // The gradient of differentiable forward output `i` (undefined if none arrived).
  const Tensor& grad(std::size_t i = 0) const { return grads_[i]; }
  // A saved tensor the running formula declared: an input by argument name ("mat2"), or an output by
  // return name ("result", "total_weight"). Reading a name the formula did not declare is an
  // internal error (Note [A formula declares the tensors it reads]).
  Tensor saved(ArgName name) const;
  // A non-tensor argument of the forward call (tensor arguments are read through saved()).
  const IValue& arg(ArgName name) const;
  Scalar scalar(ArgName name) const { return arg(name).to_scalar(); }
  std::int64_t integer(ArgName name) const { return arg(name).to_int(); }
  // Sizes, strides and dtype a tensor input had in the forward call (PyTorch's self.sym_sizes() etc.).
  IntArrayRef sizes(ArgName name) const;
  IntArrayRef strides(ArgName name) const;
  ScalarType dtype(ArgName name) const;
  std::int64_t storage_offset(ArgName name) const;
  // PyTorch's grad_input_mask: whether the k-th input the running formula names needs a gradient
  // (Note [One formula for several inputs]).
  bool grad_input_mask(std::size_t k) const { return input_mask_ >> k & 1u; }

 private:
  const TensorGeometry& geometry(ArgName name) const;

  FormulaNode& node_;
  std::span<const Tensor> grads_;
  std::uint32_t reads_;
  std::uint32_t input_mask_;
};

// Note [A formula declares the tensors it reads]
// derivatives.yaml writes a formula as an expression, and PyTorch's code generator finds the tensors
// each one reads in it (load_derivatives.py: saved_inputs, saved_outputs). A C++ formula cannot be
// read that way, so each formula lists them (InputFormula::reads), and the row saves their union:
//   mul.Tensor    self: grad * other        ->  {"self", {"other"}, [](C c) { ... c.saved("other") ... }}
// What it reads is then known per formula, which is what saving only what will be used needs: PyTorch
// saves a tensor that one formula alone reads only when that formula will run
// (grad_fn->should_compute_output(edge), gen_variable_type.py's guard_for), and so does strata, with
// guard_for's rules: no guard on a row of a "backward" op, on a row with one formula, on a saved
// output or a `Tensor?` argument, or on a name several formulas read. That keeps unneeded inputs out
// of the graph. An in-place op whose formula reads `self` saves self as it was before the write, a
// clone (PyTorch's original_self = self.clone()), made only when that guard lets it: saved as itself,
// self would be held by the node that is now its own history, a reference cycle that never frees.
// A declaration that is wrong must not go unnoticed, as an unsaved tensor would read as undefined, so
// BackwardContext::saved refuses any name the running formula did not declare: one test of a bit,
// and every formula runs under gradcheck (tests/autograd/test_gradcheck.cpp).

// Note [Formulas run in input-name order]
// A row has one formula per differentiable input, as a derivatives.yaml entry has one line per
// input ("self: ...", "mat2: ..."). PyTorch's code generator emits those lines sorted by input name
// (load_derivatives.py: `for raw_names in sorted(defn.keys())`), so MmBackward0 computes mat2's
// gradient before self's and DivBackward0 other's before self's; a dispatch mode sees the ops in
// that order. The table sorts each row's formulas by name once, and the node runs them in that
// order, each only when its input needs a gradient. Edges (and gradient slots) stay in schema order.
//
// Note [One formula for several inputs]
// derivatives.yaml may give several inputs one formula that returns a tuple, one gradient each
// ("input, weight, bias: native_layer_norm_backward(..., grad_input_mask)"), so that one backward
// op computes them all. Such a formula names its inputs as the yaml does, separated by ", ", and
// returns one tensor per name, in that order; it runs once, when any of them needs a gradient, and
// reads which do through BackwardContext::grad_input_mask (PyTorch's grad_input_mask). It sorts
// among the row's formulas by that whole string, as the yaml's key sorts, and the tensors it reads
// are saved unguarded, as guard_for leaves a formula of several inputs.
struct InputFormula {
  using Fn = Tensor (*)(const BackwardContext&);
  using MultiFn = variable_list (*)(const BackwardContext&);
  // {"self", formula} reads no saved tensor; {"self", {"other"}, formula} reads `other`
  // (Note [A formula declares the tensors it reads]).
  InputFormula(std::string_view input_name, Fn fn) : input(input_name), formula(fn) {}
  InputFormula(std::string_view input_name, std::initializer_list<std::string_view> saved_names, Fn fn)
      : input(input_name), reads(saved_names), formula(fn) {}
  // {"input, weight, bias", {"input", "result1"}, formula}: one formula for several inputs.
  InputFormula(std::string_view input_names, std::initializer_list<std::string_view> saved_names, MultiFn fn)
      : input(input_names), reads(saved_names), multi_formula(fn) {}

  std::string_view input;               // the schema argument, "self" (or several: "input, weight")
  std::vector<std::string_view> reads;  // argument or return names of the saved tensors it reads
  Fn formula = nullptr;
  MultiFn multi_formula = nullptr;      // set instead of `formula` for a formula of several inputs
};

enum class Differentiability {
  Formula,           // records a node that runs the row's formulas
  NonDifferentiable, // outputs never require grad (detach, ones_like, ...)
  Kernel,            // the op's own Autograd kernel records its node (cat: one edge per tensor of a Tensor[])
};

struct DerivativeRow {
  std::string_view op;        // "aten::addmm"
  std::string_view overload;  // "" for default
  std::string_view node_name; // "AddmmBackward0"; empty: derived (Note [Node names are derived])
  Differentiability kind = Differentiability::Formula;
  std::vector<InputFormula> formulas;      // one per differentiable input (Note [Formulas run in input-name order])
  std::vector<std::string_view> geometry;  // tensor arguments whose sizes/strides/dtype the formula reads
  std::vector<int> outputs = {0};          // differentiable outputs (PyTorch's output_differentiability)
  // Tensor arguments derivatives.yaml marks `non_differentiable` (nll_loss's target). Any other tensor
  // argument without a formula may not require grad (Note [Arguments without a formula]).
  std::vector<std::string_view> non_differentiable;
};

// How many non-tensor arguments, geometries and saved tensors a FormulaNode keeps without a heap
// allocation: as many as the table's widest rows record (a row that records more still works).
inline constexpr std::size_t kInlineRecordedArgs = 6;
inline constexpr std::size_t kInlineRecordedGeometry = 2;
inline constexpr std::size_t kInlineSavedVariables = 5;  // native_layer_norm: input, weight, bias, mean, rstd

// A row resolved against its op's schema (argument positions instead of names).
struct ResolvedRow {
  const DerivativeRow* row = nullptr;
  OperatorHandle op;
  SmallVector<std::uint8_t, 4> input_args;   // schema position of each differentiable input, in schema order
  // The formulas in the order they run (sorted by input name), each with its input's slot in input_args
  // and the saved names it reads (bit k: saved name k).
  struct OrderedFormula {
    const InputFormula* formula;
    std::uint8_t slot;
    std::uint32_t reads;
    // A formula of several inputs: the slot of each input it names, in its order (slot is the first).
    SmallVector<std::uint8_t, 1> slots;
  };
  SmallVector<OrderedFormula, 4> formula_order;
  // The saved names: the formulas' `reads`, each once, in the order the formulas list them.
  SmallVector<std::int8_t, 4> saved_args;    // per saved name: argument position, or -1 for an output
  SmallVector<std::int8_t, 4> saved_returns; // per saved name: return position, or -1 for an input
  // Per saved name: the slot (in input_args) of the one formula that reads it, saved only when that
  // input needs a gradient; -1 to save it always (Note [A formula declares the tensors it reads]).
  SmallVector<std::int8_t, 4> saved_guards;
  SmallVector<std::uint8_t, 4> geometry_args;  // schema position of each `geometry` name
  // Schema position of each non-tensor argument: the node keeps these for arg() (tensors a formula
  // reads are saved, or their geometry recorded).
  SmallVector<std::uint8_t, 6> recorded_args;
  // hash_name of each recorded argument, `saved` name and `geometry` name, for formulas' lookups.
  SmallVector<std::uint32_t, 8> argument_hashes;
  SmallVector<std::uint32_t, 8> saved_hashes;
  SmallVector<std::uint32_t, 8> geometry_hashes;
  // Schema position of each tensor argument with no formula that is not marked non_differentiable: a
  // Formula row refuses one that requires grad (Note [Arguments without a formula]).
  SmallVector<std::uint8_t, 2> no_grad_args;
  bool inplace = false;                      // writes its first argument and returns it
  // Returns an alias of its first argument without writing it (Tensor(a) self -> Tensor(a)): a
  // differentiable view op, whose recorded output gets view state (autograd/view_history.h).
  bool is_view = false;
  bool aliases_self = false;                 // inplace or is_view: one output, which aliases self
  // Copied from the row and the schema, so the autograd handler reads them from one place.
  Differentiability kind = Differentiability::Formula;
  bool saves_outputs = false;                // some saved_returns entry is >= 0
  std::uint32_t num_arguments = 0;
  std::uint32_t num_returns = 0;
};

class DerivativeTable {
 public:
  // Resolves `rows`, with those added before, against the registered ops; throws if a row names an
  // unknown op or argument. Every resolved row moves, so rows are added at registration, before
  // any node (which refers to its row) is recorded.
  void add(const std::vector<DerivativeRow>& rows);
  // The row of `op`, or null when the op has none.
  const ResolvedRow* find(const OperatorHandle& op) const {
    const std::size_t i = op.index();
    return i < by_op_.size() && by_op_[i].row ? &by_op_[i] : nullptr;
  }
  std::vector<const ResolvedRow*> rows() const;

 private:
  std::vector<DerivativeRow> rows_;  // what by_op_ points into
  // The rows' derived node names, each in a block of its own so that rows' views of them stay valid
  // (a deque would too, but has no constant-initialised empty state).
  std::vector<std::unique_ptr<std::string>> derived_names_;
  std::vector<ResolvedRow> by_op_;
};

// The table, filled by register_autograd(). A plain global (its empty state is constant-initialised,
// so it needs no guard): the autograd handler reads it on every op it sees.
namespace detail {
extern DerivativeTable the_derivative_table;
}
inline const DerivativeTable& derivative_table() { return detail::the_derivative_table; }
inline DerivativeTable& mutable_derivative_table() { return detail::the_derivative_table; }

// The rows for strata's ops (autograd/formulas/, one file per op family).
std::vector<DerivativeRow> derivative_rows();

}  // namespace strata::autograd
