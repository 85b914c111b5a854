// tests/fuzz/api_autograd.cpp: the interpreter's autograd instructions: backward passes, reading and
// setting .grad, gradcheck of an op of the table over small float64 inputs, and releasing at the end
// the graphs an in-place write made unusable.
#include <unordered_set>

#include "autograd/backward.h"
#include "autograd/formula_node.h"
#include "autograd/gradcheck.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/fuzz/api_calls.h"
#include "tests/fuzz/api_interpreter.h"

namespace strata::fuzz {

namespace {
constexpr std::int64_t kMaxGradcheckOutputs = 16;
}  // namespace

// backward: root flags. flags: bits 0-1 the gradient (none, ones_like, a slot, zeros_like), bits 2-3
// retain_graph (default, true, false), bit 4 create_graph, bit 5 a second root (vector form).
void Interpreter::backward(ByteReader& r) {
  const Slot root = w_.slot(r.u8());
  const std::uint8_t flags = r.u8();
  if (!root.tensor.defined() || root.tainted) return;
  Tensor gradient;
  switch (flags % 4) {
    case 1: attempt("ones_like for a gradient", [&] { gradient = ones_like(root.tensor); }); break;
    case 2: {
      const Slot& g = w_.slot(r.u8());
      if (g.tainted) return;
      gradient = g.tensor;
      break;
    }
    case 3: attempt("zeros_like for a gradient", [&] { gradient = zeros_like(root.tensor); }); break;
    default: break;
  }
  const std::uint8_t retain_bits = (flags >> 2) % 4;
  const std::optional<bool> retain = retain_bits == 1 ? std::optional<bool>(true)
                                   : retain_bits == 2 ? std::optional<bool>(false)
                                                      : std::nullopt;
  const bool create = flags & 0x10;
  if (flags & 0x20) {
    const Slot other = w_.slot(r.u8());
    if (other.tainted) return;
    attempt("backward of two roots", [&] {
      strata::backward(std::vector<Tensor>{root.tensor, other.tensor}, std::vector<Tensor>{gradient, Tensor()}, retain, create);
    });
    return;
  }
  attempt("backward", [&] { strata::backward(root.tensor, gradient, retain, create); });
}

// grad: slot kind [operand]. kind 0 reads .grad into slot `operand`; 1 sets it to None; 2 to a pool
// tensor; 3 to zeros_like.
void Interpreter::grad(ByteReader& r) {
  const Slot s = w_.slot(r.u8());
  const Tensor& t = s.tensor;
  switch (r.u8() % 4) {
    case 0: {
      const std::uint8_t dst = r.u8();
      store(w_, dst, t.grad(), s.tainted);
      break;
    }
    case 1: attempt("set_grad(None)", [&] { set_grad(t, Tensor()); }); break;
    case 2: {
      const Slot& g = w_.slot(r.u8());
      if (attempt("set_grad", [&] { set_grad(t, g.tensor); })) keep_leaf(t);
      break;
    }
    default:
      if (s.tainted || is_huge(t)) return;
      if (attempt("set_grad(zeros_like)", [&] { set_grad(t, zeros_like(t)); })) keep_leaf(t);
  }
}

// gradcheck: count, per input a rank and sizes (1 to 3), kind, then an op and its arguments over a
// pool of just the inputs. kind 0xFF makes the function return an undefined tensor, which gradcheck refuses.
void Interpreter::gradcheck(ByteReader& r) {
  std::vector<Tensor> inputs;
  World scratch;
  for (std::size_t n = 1 + r.pick(2); n > 0; --n) {
    DimVector sizes;
    for (std::size_t k = r.pick(3); k > 0; --k) sizes.push_back(1 + r.pick(3));
    Tensor x = randn(sizes, {.dtype = ScalarType::Float64});
    requires_grad_(x);
    inputs.push_back(x);
  }
  for (std::size_t i = 0; i < kSlots; ++i) scratch.slots[i].tensor = inputs[i % inputs.size()];
  const std::uint8_t kind = r.u8();
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  if (kind == 0xFF) {
    fn = [](const std::vector<Tensor>& in) { return in[0].defined() ? Tensor() : in[0]; };
  } else {
    const auto& ops = all_ops();
    const OperatorHandle op = ops[r.u8() % ops.size()];
    const Stack args = read_arguments(scratch, r, op);
    if (args.size() != op.schema().arguments().size() || op.schema().returns().empty()) return;
    if (!rehearse_call(op, args).affordable) return;
    fn = [op, args](const std::vector<Tensor>&) {
      Stack stack = args;
      op.call(stack);
      return stack[0].is_tensor() ? stack[0].to_tensor() : Tensor();
    };
    Tensor probe;
    if (!attempt("a gradcheck probe", [&] { probe = fn(inputs); })) return;
    if (!probe.defined() || probe.numel() > kMaxGradcheckOutputs || probe.device() != Device::CPU) return;
  }
  attempt("gradcheck", [&] { autograd::gradcheck(fn, inputs); });
}

}  // namespace strata::fuzz

namespace strata::fuzz {

// Note [Graphs a write made unusable are released at the end]
// A node that saved a tensor as itself holds it; when a later in-place op writes that tensor (or its
// base) and so gives it a history that reaches the node, the graph holds itself: mul(u, u) saves u, a
// view of r; u.add_(f(mul's result)) makes r's history reach that node. PyTorch builds the same cycle
// and frees it never; its backward fails anyway (the saved tensor's version moved). That is not a
// strata bug, and LeakSanitizer would report it, so at the end of an input the interpreter frees what
// such nodes saved, as a backward would, in every graph the pool ever held. Only nodes with a saved
// tensor that was modified are released: a node that saves what it must not (an output as itself, an
// input its own op writes) still leaks and is reported. This relies on every tensor family counting
// its writes as PyTorch's do: meta tensors in their data-less storage, a wrapper and its views in
// the payload they share. Every in-place op's saving is also checked directly
// (tests/autograd/test_saved_tensors.cpp).
// The walk reads the histories tensors hold now, and a view's base's: it asks no view for its
// grad_fn, since that would regenerate a stale one (AsStridedBackward0 over the base's newer
// history), making at teardown a link from the view into graphs that may save it.
// The other cycle PyTorch documents, a leaf whose .grad has a history that holds the leaf (backward
// with create_graph, or a grad set to a function of the leaf), is broken by clearing .grad on every
// tensor the walk meets, and on the leaf of every AccumulateGrad it reaches.
// A third cycle runs through a leaf's AccumulateGrad, which holds the leaf as PyTorch's does: a
// tensor the leaf holds (the leaf itself, its view base, a wrapper leaf's inner tensors) written in
// place from something computed from the leaf gets a history that reaches that AccumulateGrad.
// x.requires_grad_(); v = x.view(3); x.requires_grad_(False); x.copy_(v) and, with w a wrapper
// around e, e.add_(w.view(3)) both keep their tensors alive in PyTorch 1.13 after del and
// gc.collect(). Such a tensor's history is dropped, only when it does reach the AccumulateGrad
// that holds it.
void Interpreter::release_unusable_graphs() {
  std::vector<autograd::Node*> stack;
  std::unordered_set<const autograd::Node*> seen;
  std::vector<Tensor> with_grads;
  auto visit = [&](autograd::Node* node) {
    if (node && seen.insert(node).second) stack.push_back(node);
  };
  auto history = [](const Tensor& t) -> autograd::Node* {
    const AutogradMeta* meta = t.defined() ? t.impl()->autograd_meta() : nullptr;
    return meta ? meta->grad_fn : nullptr;
  };
  // Whether `to` can be reached from `from` along next edges.
  auto reaches = [](const autograd::Node* from, const autograd::Node* to) {
    std::vector<const autograd::Node*> pending{from};
    std::unordered_set<const autograd::Node*> met;
    while (!pending.empty()) {
      const autograd::Node* n = pending.back();
      pending.pop_back();
      if (!n || !met.insert(n).second) continue;
      if (n == to) return true;
      for (const autograd::Edge& e : n->next_edges()) pending.push_back(e.function.get());
    }
    return false;
  };
  std::vector<autograd::NodePtr> accumulators;  // owned: dropping a history may free the cycle they are on
  auto visit_tensor = [&](const Tensor& t) {
    const AutogradMeta* meta = t.defined() ? t.impl()->autograd_meta() : nullptr;
    if (!meta) return;
    visit(meta->grad_fn);
    if (meta->is_view()) visit(history(meta->view.base));
    if (meta->grad.defined()) {
      with_grads.push_back(t);
      visit(history(meta->grad));
    }
  };
  for (const std::vector<Tensor>* list : {&w_.histories, &w_.leaves})
    for (const Tensor& t : *list) visit_tensor(t);
  for (const Slot& s : w_.slots) visit_tensor(s.tensor);
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (auto* formula = dynamic_cast<autograd::FormulaNode*>(node);
        formula && formula->saves_a_modified_tensor())
      formula->release_variables();
    if (const auto* accumulate = dynamic_cast<const autograd::AccumulateGrad*>(node)) {
      with_grads.push_back(accumulate->variable());
      accumulators.push_back(autograd::NodePtr(node));
    }
    for (const autograd::Edge& e : node->next_edges()) visit(e.function.get());
  }
  for (const autograd::NodePtr& accumulate : accumulators) {
    const Tensor leaf = static_cast<const autograd::AccumulateGrad&>(*accumulate).variable();
    std::vector<Tensor> held{leaf};
    if (const AutogradMeta* meta = leaf.impl()->autograd_meta(); meta && meta->is_view()) held.push_back(meta->view.base);
    if (leaf.subclass())
      for (const Tensor& inner : leaf.subclass()->flatten(leaf).inner) held.push_back(inner);
    for (const Tensor& t : held)
      if (reaches(history(t), accumulate.get())) autograd::set_gradient_edge(t, autograd::Edge{});
  }
  for (const Tensor& t : with_grads) attempt("clearing a grad", [&] { set_grad(t, Tensor()); });
  w_.histories.clear();
}

}  // namespace strata::fuzz
