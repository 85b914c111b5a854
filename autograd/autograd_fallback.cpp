// autograd/autograd_fallback.cpp: the one handler at the Autograd key. When grad mode is on and an
// input requires grad, it records a FormulaNode from the op's derivative-table row, runs the op below
// itself (Autograd excluded for everything the op dispatches), and attaches the node to the outputs.
// No op body knows about autograd. This is PyTorch's VariableType kernel, as one boxed function.
#include "autograd/derivative_table.h"
#include "autograd/formula_node.h"
#include "autograd/grad_mode.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "core/dispatch/dispatch_trace.h"

namespace strata::autograd {

namespace {

// Inline: every op the handler sees goes below through here.
[[gnu::always_inline]] inline void redispatch_below(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  ExcludeKeyGuard below(DispatchKey::Autograd);
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

bool any_input_requires_grad(const ResolvedRow& row, const IValue* args) {
  for (std::uint8_t i : row.input_args)
    if (requires_grad_at(args, i)) return true;
  return false;
}

// Note [Arguments without a formula]
// A derivatives.yaml entry lists a formula per differentiable input; an input it marks
// `non_differentiable` is ignored, and any other tensor input (nll_loss's weight) is one the op cannot
// differentiate. PyTorch's generated code refuses such an input when it requires grad (in grad mode),
// before anything runs, rather than silently giving it no gradient; so does this handler, from the
// positions the table resolved once (ResolvedRow::no_grad_args).
[[gnu::cold]] void check_no_requires_grad(const ResolvedRow& row, const IValue* args) {
  for (std::uint8_t i : row.no_grad_args) {
    if (!requires_grad_at(args, i)) continue;
    const std::string& name = row.op.schema().arguments()[i].name;
    STRATA_CHECK(false, "The function '", row.op.name().name, "' is not differentiable with respect to argument '", name,
                 "'. This input cannot have requires_grad True.");
  }
}

// Note [The trace says what autograd decided]
// A learner reading the dispatch trace sees the Autograd step of every op whose tensors carry the
// key, but not whether a node came of it: that depends on grad mode, the op's derivative row and its
// inputs. So when this thread traces, the fallback adds one line under the op's steps saying what
// it did ("autograd: recorded AddmmBackward0", "autograd: not recorded (no input requires grad)").
// Untraced, each branch pays one relaxed load (dispatch_trace_in_use).
[[gnu::cold, gnu::noinline]] void trace_decision(std::string_view what, std::string_view name = {}) {
  dispatch_trace_note(strata::detail::str_cat("autograd: ", what, name));
}

// An op registered after autograd, with no row: only a problem if a gradient is wanted.
[[gnu::cold]] void redispatch_without_row(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const std::size_t num_args = op.schema().arguments().size();
  const IValue* args = stack.data() + stack.size() - num_args;
  for (std::size_t i = 0; i < num_args; ++i)
    STRATA_CHECK(!requires_grad_at(args, static_cast<std::uint8_t>(i)), "the derivative for '", op.name().qualified(),
                 "' is not implemented (no derivative row)");
  redispatch_below(op, keys, stack);
  if (dispatch_trace_in_use()) trace_decision("not recorded (no derivative formula, and no input requires grad)");
}

// Note [A recorded output that is None]
// A mode or subclass handler may return None for a Tensor (Note [The handler protocol]). Autograd
// records the op anyway, as PyTorch's VariableType does (set_history of an undefined output adds
// Node::undefined_input()): the None keeps its place among the node's inputs, gets no edge, and the
// caller receives it; the other outputs get their history as usual, and a saved None comes back
// undefined. An in-place op's result is self whatever the handler returned (PyTorch's kernel
// rebases self's history and returns self), so its None is replaced by self before anything reads it.

// An in-place op or a differentiable view op: its one output aliases self, so autograd keeps track of
// what the write or the view shares (Note [Views share their base's history]). Out of line: the
// common op pays one test for these.
[[gnu::noinline]] void record_aliasing_op(const ResolvedRow& row, const OperatorHandle& op, DispatchKeySet keys, Stack& stack,
                                          const IValue* args) {
  const Tensor& self = args[0].to_tensor();
  if (row.inplace) check_inplace(self);
  NodePtr owner = make_node<FormulaNode>(row, args);
  auto& node = static_cast<FormulaNode&>(*owner);
  // Found now: the call replaces its arguments.
  Tensor base = row.is_view ? base_of(self) : Tensor();
  Tensor written = row.inplace ? self : Tensor();

  redispatch_below(op, keys, stack);

  IValue* returns = stack.data() + stack.size() - row.num_returns;
  if (!returns[0].to_tensor().defined()) [[unlikely]] {  // Note [A recorded output that is None]
    if (!row.inplace) {
      node.add_undefined_input();
      node.save_outputs(returns);
      return;
    }
    returns[0] = IValue(std::move(written));
  }
  const Tensor& out = returns[0].to_tensor();
  node.add_input_metadata(out);
  if (is_floating_point(out.dtype())) {
    if (row.inplace) {
      rebase_history(out, Edge{std::move(owner), 0});  // self's history, or its base's if it is a view
    } else {
      set_gradient_edge(out, Edge{std::move(owner), 0});
      make_differentiable_view(out, std::move(base));
    }
  }
  node.save_outputs(returns);
  if (dispatch_trace_in_use()) [[unlikely]] trace_decision("recorded ", node.name());
}

}  // namespace

void autograd_fallback(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  // Nothing is recorded without grad mode (no_grad, and every backward without create_graph): the op
  // goes straight below, before its row is looked up or its arguments are read.
  if (!is_grad_enabled()) {
    redispatch_below(op, keys, stack);
    if (dispatch_trace_in_use()) [[unlikely]] trace_decision("not recorded (grad mode is off)");
    return;
  }
  const ResolvedRow* row = derivative_table().find(op);
  if (!row) [[unlikely]] {
    redispatch_without_row(op, keys, stack);
    return;
  }
  const IValue* args = stack.data() + stack.size() - row->num_arguments;
  if (!row->no_grad_args.empty()) [[unlikely]] check_no_requires_grad(*row, args);
  if (row->kind == Differentiability::NonDifferentiable || !any_input_requires_grad(*row, args)) {
    redispatch_below(op, keys, stack);
    if (dispatch_trace_in_use()) [[unlikely]]
      trace_decision(row->kind == Differentiability::NonDifferentiable ? "not recorded (not differentiable)"
                                                                         : "not recorded (no input requires grad)");
    return;
  }
  if (row->aliases_self) [[unlikely]] {
    record_aliasing_op(*row, op, keys, stack, args);
    return;
  }

  NodePtr owner = make_node<FormulaNode>(*row, args);
  auto& node = static_cast<FormulaNode&>(*owner);

  redispatch_below(op, keys, stack);

  const IValue* returns = stack.data() + stack.size() - row->num_returns;
  const std::size_t num_outputs = row->row->outputs.size();
  for (std::size_t k = 0; k < num_outputs; ++k) {
    const Tensor& out = returns[row->row->outputs[k]].to_tensor();
    if (!out.defined()) [[unlikely]] {  // Note [A recorded output that is None]
      node.add_undefined_input();
      continue;
    }
    node.add_input_metadata(out);
    // Only floating outputs carry gradients. The last output takes this function's own reference to
    // the node (one count fewer to take and drop).
    if (is_floating_point(out.dtype()))
      set_gradient_edge(out, Edge{k + 1 == num_outputs ? std::move(owner) : NodePtr(owner), static_cast<std::uint32_t>(k)});
  }
  node.save_outputs(returns);
  if (dispatch_trace_in_use()) [[unlikely]] trace_decision("recorded ", node.name());
}

}  // namespace strata::autograd
