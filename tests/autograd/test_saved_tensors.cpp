// tests/autograd/test_saved_tensors.cpp: what nodes save for backward. Every in-place op of the op
// table leaves no reference cycle, whichever of its arguments require grad; an input only one formula
// reads is saved only when that formula will run (PyTorch's guard_for); a formula cannot read a saved
// tensor it did not declare. Note [A formula declares the tensors it reads].
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "autograd/backward.h"
#include "autograd/derivative_table.h"
#include "autograd/formula_node.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "ops/op_table.h"

namespace test_saved_tensors {  // Note [Test files in unity builds]

using namespace strata;

namespace {

Tensor leaf_2x3(float first) {
  Tensor t = tensor<float>({first, 2, -3, 4, 0.5f, -1}, {2, 3});
  requires_grad_(t);
  return t;
}

// Every op whose schema writes its first argument, found from the op table: a new in-place op is
// tested below without being named.
std::vector<OperatorHandle> inplace_ops() {
  autograd::register_autograd();
  std::vector<OperatorHandle> out;
  for (const OperatorHandle& op : Dispatcher::singleton().ops()) {
    const auto& args = op.schema().arguments();
    if (op.name().ns != "test" && !args.empty() && args[0].type.is_write()) out.push_back(op);
  }
  return out;
}

// How `self` of an in-place call is made.
enum class SelfKind {
  NonLeaf,      // clone(x) of a leaf x that requires grad
  ViewOfNonLeaf,  // a transposed view of such a clone: the write rebases the base's history (CopySlices)
  Plain,        // a tensor that does not require grad (its history after the call is the op's node)
};

std::string self_kind_name(SelfKind k) {
  switch (k) {
    case SelfKind::NonLeaf: return "a non-leaf that requires grad";
    case SelfKind::ViewOfNonLeaf: return "a view of a non-leaf that requires grad";
    case SelfKind::Plain: return "a tensor that does not require grad";
  }
  return "";
}

}  // namespace

TEST_CASE("every in-place op leaves no reference cycle, whichever of its arguments require grad") {
  // Saving `self` as itself would make the op's node, which becomes self's history, hold self: a cycle
  // that never frees (1,000 steps of `t = x * w; t.mul_(m)` held 527 MB). After the call nothing but
  // this test may hold self, and once every non-leaf is dropped each leaf is held by this test alone
  // (a graph that lives on would hold their AccumulateGrad nodes, which hold the leaves). Under
  // AddressSanitizer a cycle is also a leak that LeakSanitizer reports at exit.
  const std::vector<OperatorHandle> ops = inplace_ops();
  std::set<std::string> names;
  for (const OperatorHandle& op : ops) names.insert(op.str());
  for (const char* expected : {"aten.add_.Tensor", "aten.mul_.Tensor", "aten.copy_.default", "aten.fill_.Scalar",
                               "aten.zero_.default", "aten.normal_.default", "aten.uniform_.default"})
    CHECK_MESSAGE(names.count(expected) == 1, expected);

  for (const OperatorHandle& op : ops) {
    const auto& schema_args = op.schema().arguments();
    std::vector<std::size_t> others;  // positions of the tensor arguments after self
    for (std::size_t i = 1; i < schema_args.size(); ++i)
      if (schema_args[i].type.is_tensor_like()) others.push_back(i);
    for (SelfKind self_kind : {SelfKind::NonLeaf, SelfKind::ViewOfNonLeaf, SelfKind::Plain}) {
      for (std::uint32_t mask = 0; mask < (1u << others.size()); ++mask) {
        INFO(op.str() << ", self " << self_kind_name(self_kind) << ", requires-grad mask of the other tensors " << mask);
        std::vector<Tensor> leaves;  // every leaf that requires grad, kept to count who holds it
        Stack stack;
        Tensor self;
        bool others_require_grad = false;  // a mask bit is set for a tensor that can require grad
        {
          Tensor base;
          if (self_kind == SelfKind::Plain) {
            self = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
          } else if (self_kind == SelfKind::NonLeaf) {
            leaves.push_back(leaf_2x3(1));
            self = clone(leaves.back());
          } else {
            Tensor x = tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2});
            requires_grad_(x);
            leaves.push_back(x);
            base = clone(x);
            self = t(base);
          }
          stack.emplace_back(self);
          for (std::size_t i = 1; i < schema_args.size(); ++i) {
            const SchemaArgument& a = schema_args[i];
            const auto k = static_cast<std::size_t>(std::find(others.begin(), others.end(), i) - others.begin());
            if (a.type.is_tensor_like() && !a.type.list && a.name == "mask") {
              stack.emplace_back(tensor<bool>({true, false, true, false, false, true}, {2, 3}));  // masked_fill_'s
            } else if (a.type.is_tensor_like() && !a.type.list) {
              Tensor other = leaf_2x3(static_cast<float>(i));
              if (mask >> k & 1u) {
                leaves.push_back(other);
                others_require_grad = true;
              } else {
                requires_grad_(other, false);
              }
              stack.emplace_back(other);
            } else if (a.default_text) {
              stack.push_back(op.schema().default_value(i));
            } else if (a.type.kind == SchemaType::Kind::Scalar && !a.type.list) {
              stack.emplace_back(Scalar(2.0));
            } else {
              FAIL("no test value for argument " << a.name << " of " << op.str() << ": extend this test");
            }
          }
          op.call(stack);  // replaces the arguments, the only other references to them, with its return
          REQUIRE(stack.size() == 1);
          CHECK(stack.back().to_tensor().is_same(self));
          stack.clear();
          // A non-differentiable op (logical_or_) records nothing: a plain self stays without history,
          // as PyTorch's output_differentiability [False] leaves it; a self with history keeps it.
          const autograd::ResolvedRow* row = autograd::derivative_table().find(op);
          const bool differentiable = row && row->kind != autograd::Differentiability::NonDifferentiable;
          const bool recorded = self_kind != SelfKind::Plain || (others_require_grad && differentiable);
          CHECK((self.grad_fn() != nullptr) == recorded);
          CHECK(self.use_count() == 1);  // nothing holds self but this test: no node saved it
        }
        self = Tensor();
        for (const Tensor& l : leaves) CHECK(l.use_count() == 1);  // no graph outlived its tensors
      }
    }
  }
}

TEST_CASE("an input only one formula reads is saved only when that formula runs (guard_for)") {
  // PyTorch's generated code saves `other` of mul for self's gradient and `self` for other's, each only
  // when that gradient is wanted: a leaf is then held by this test and its AccumulateGrad (2), plus 1
  // while a node saves it. Rows of a "backward" op and rows with one formula save unconditionally.
  const Tensor x = leaf_2x3(1);
  const Tensor c = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    const Tensor y = mul(x, c);  // only self needs a gradient: its formula reads other, so x is not saved
    CHECK(x.use_count() == 2);
    CHECK(c.use_count() == 2);
  }
  {
    const Tensor y = mul(c, x);  // only other needs one: its formula reads self (c), not other (x)
    CHECK(x.use_count() == 2);
    CHECK(c.use_count() == 2);
  }
  {
    const Tensor w = leaf_2x3(2);
    const Tensor y = mul(x, w);  // both: both saved
    CHECK(x.use_count() == 3);
    CHECK(w.use_count() == 3);
  }
  {
    const Tensor m = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor y = mm(m, t(x));  // mm: self (m) is read by mat2's formula; mat2 by self's (not run)
    CHECK(m.use_count() == 2);
    CHECK(x.use_count() == 2);  // t(x) was not saved: the view died, and x is held by its accumulator
  }
  {
    const Tensor d = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor y = div(d, x);  // other's formula reads self and other: both saved (other by two formulas)
    CHECK(d.use_count() == 2);
    CHECK(x.use_count() == 3);
    const Tensor z = div(x, d);  // self's formula reads other only, self is read by other's (not run)
    CHECK(x.use_count() == 3);   // held by y's node, not z's
    CHECK(d.use_count() == 3);
  }
  {
    // threshold_backward is a "backward" op: self is saved though only grad_output's formula reads it,
    // and that formula will not run (grad_output does not require grad).
    const Tensor y = threshold_backward(c, x, 0);
    CHECK(x.use_count() == 3);
  }
  backward(sum(mul_(mul(x, x), c)));  // the saved tensors are the ones the formulas read
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 8, -18, 32, 5, -12});
}

TEST_CASE("a formula that reads a saved tensor it did not declare is an internal error") {
  autograd::register_autograd();
  // A mul row whose `self` formula reads `self` but declares only `other`: the table accepts it, and the
  // formula is refused when it reads, whichever inputs require grad.
  const std::vector<autograd::DerivativeRow> rows = {
      {.op = "aten::mul", .overload = "Tensor", .node_name = "MulBackward0",
       .formulas = {{"self", {"other"}, [](const autograd::BackwardContext& c) { return mul(c.grad(), c.saved("self")); }},
                    {"other", {"self"}, [](const autograd::BackwardContext& c) { return mul(c.grad(), c.saved("self")); }}}}};
  autograd::DerivativeTable table;
  table.add(rows);
  const autograd::ResolvedRow* row = table.find(ops::op("aten::mul", "Tensor"));
  REQUIRE(row != nullptr);
  const Tensor x = leaf_2x3(1);
  const Tensor w = leaf_2x3(2);
  const IValue args[] = {IValue(x), IValue(w)};
  autograd::NodePtr node = autograd::make_node<autograd::FormulaNode>(*row, args);
  Tensor grads[] = {ones_like(x)};
  CHECK_THROWS_WITH_AS(node->apply(grads),
                       doctest::Contains("MulBackward0: self is not among the saved tensors this formula declares it reads"),
                       InternalError);
  // A name that is saved by no formula of the row is refused the same way.
  const std::vector<autograd::DerivativeRow> unsaved = {
      {.op = "aten::mul", .overload = "Tensor", .node_name = "MulBackward0",
       .formulas = {{"self", [](const autograd::BackwardContext& c) { return mul(c.grad(), c.saved("other")); }},
                    {"other", [](const autograd::BackwardContext& c) { return c.grad(); }}}}};
  autograd::DerivativeTable table2;
  table2.add(unsaved);
  autograd::NodePtr node2 = autograd::make_node<autograd::FormulaNode>(*table2.find(ops::op("aten::mul", "Tensor")), args);
  Tensor grads2[] = {ones_like(x)};
  CHECK_THROWS_WITH_AS(node2->apply(grads2), doctest::Contains("other is not among the saved tensors"), InternalError);
  // A declared name that is no argument or return is refused when the table is built.
  const std::vector<autograd::DerivativeRow> misnamed = {
      {.op = "aten::neg", .node_name = "NegBackward0",
       .formulas = {{"self", {"selff"}, [](const autograd::BackwardContext& c) { return c.grad(); }}}}};
  autograd::DerivativeTable table3;
  CHECK_THROWS_WITH_AS(table3.add(misnamed), doctest::Contains("NegBackward0: nothing named selff to save"), InternalError);
}

TEST_CASE("an in-place op's input that sees the write is saved without a reference, and refused on unpack") {
  // mul_(t, t): `other` is self. Saved as itself it would hold self, whose history is this node: a cycle.
  // PyTorch keeps that cycle and fails the backward (the input's version moved); strata fails it the
  // same way, in the same words, without the cycle.
  const Tensor x = leaf_2x3(1);
  {
    Tensor t = clone(x);
    mul_(t, t);
    CHECK(t.use_count() == 1);
    CHECK_THROWS_WITH_AS(backward(sum(t)),
                         "one of the variables needed for gradient computation has been modified by an inplace operation: "
                         "[torch.FloatTensor [2, 3]], which is output 0 of MulBackward0, is at version 1; expected version 0 "
                         "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                         "with torch.autograd.set_detect_anomaly(True).",
                         Error);
  }
  {
    // A view of self's base holds the base (its view state), so the same applies to it. PyTorch 1.13
    // and 2.8 name the view's regenerated history there, AsStridedBackward0, and so does strata; also
    // when self is that view (v.mul_(v)).
    const std::string as_strided =
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [2, 3]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True).";
    Tensor b = clone(x);
    mul_(b, t(t(b)));
    CHECK(b.use_count() == 1);
    CHECK_THROWS_WITH_AS(backward(sum(b)), as_strided.c_str(), Error);
    const Tensor c = clone(view(x, {6}));
    const Tensor v = view(c, {2, 3});
    mul_(v, v);
    CHECK_THROWS_WITH_AS(backward(sum(c)), as_strided.c_str(), Error);
  }
  {
    // An input that does not alias self is saved as itself, and the backward runs.
    Tensor t = clone(x);
    mul_(t, clone(x));
    backward(sum(t));
    CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 4, -6, 8, 1, -2});  // d(x*x)/dx
  }
  CHECK(x.use_count() == 1);  // every graph above died with its tensors
}

}  // namespace test_saved_tensors
