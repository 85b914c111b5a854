// tests/extensions/test_custom_function.cpp: custom autograd functions (Function<T>), with cases
// ported from PyTorch's test/cpp/api/autograd.cpp (CustomAutogradTest) and op sequences and gradients
// from real PyTorch (scripts/reference/custom_function_reference.py).
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/custom_function.h"
#include "autograd/grad.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/util/warning.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"
#include "tests/test_helpers.h"
#include "modes/logging_tensor.h"

namespace test_custom_function {  // Note [Test files in unity builds]

using namespace strata;
using autograd::AutogradContext;
using autograd::Function;
using autograd::variable_list;
using testing::OpLog;

namespace {
Tensor leaf(std::initializer_list<float> values) {
  Tensor t = tensor<float>(values);
  requires_grad_(t);
  return t;
}
Tensor vec(std::initializer_list<float> values) { return tensor<float>(values); }
std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

// CustomAutogradTest.CustomFunction: a non-tensor argument between two tensors, saved_data, and
// backward returning an undefined gradient for it.
struct MulAddScaled : Function<MulAddScaled> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, std::int64_t k, const Tensor& b) {
    ctx->saved_data["k"] = k;
    ctx->save_for_backward({a, b});
    return a + mul(b, Scalar(k)) + a * b;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const std::int64_t k = ctx->saved_data["k"].to_int();
    variable_list saved = ctx->get_saved_variables();
    return {g[0] + g[0] * saved[1], Tensor(), mul(g[0], Scalar(k)) + g[0] * saved[0]};
  }
};

// The case of scripts/reference/custom_function_reference.py: a * b + a.
struct MulAdd : Function<MulAdd> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    ctx->save_for_backward({a, b});
    return a * b + a;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list s = ctx->get_saved_variables();
    return {g[0] * s[1] + g[0], g[0] * s[0]};
  }
};

struct ReturnsInput : Function<ReturnsInput> {
  static Tensor forward(AutogradContext*, const Tensor& a) { return a; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] + g[0]}; }
};
}  // namespace

TEST_CASE("Function<T>: forward runs below autograd, outputs get the node named <T>Backward") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = leaf({4, 5, 6});
  OpLog log;
  Tensor r;
  {
    ModeGuard guard(log);
    r = MulAdd::apply(x, y);
    REQUIRE(r.grad_fn() != nullptr);
    CHECK(r.grad_fn()->name() == "MulAddBackward");
    CHECK(r.requires_grad());
    backward(sum(r));
  }
  // PyTorch 1.13 and 2.8 (custom_function_reference.py, "muladd").
  CHECK(log.ops == std::vector<std::string>{"aten.mul.Tensor", "aten.add.Tensor", "aten.sum.default",
                                            "aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor",
                                            "aten.add.Tensor", "aten.mul.Tensor", "aten.detach.default",
                                            "aten.detach.default", "aten.detach.default", "aten.detach.default"});
  CHECK(values(x.grad()) == std::vector<float>{5, 6, 7});
  CHECK(values(y.grad()) == std::vector<float>{1, 2, 3});
}

namespace {
// Two outputs, a * 2 and a * 3; the loss uses only the first, so backward gets no gradient for the
// second: zeros made with aten.zeros (VariableInfo::zeros) when materialized, None when not.
template <bool Materialize>
struct TwoOutputs : Function<TwoOutputs<Materialize>> {
  static variable_list forward(AutogradContext* ctx, const Tensor& a) {
    ctx->set_materialize_grads(Materialize);
    return {mul(a, Scalar(2)), mul(a, Scalar(3))};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    CHECK(g[1].defined() == Materialize);
    // Python's g1 * 2: mul.Tensor with the number as a wrapped 0-d tensor (a tensor(values) literal
    // would be a real constant, which a mode sees lifted: aten.lift_fresh)
    const Tensor two = ops::wrapped_scalar_tensor(2);
    const Tensor three = ops::wrapped_scalar_tensor(3);
    return {g[1].defined() ? add(mul(g[0], two), mul(g[1], three)) : mul(g[0], two)};
  }
};
}  // namespace

TEST_CASE("Function<T>: a missing output gradient is aten.zeros when materialized, None when not") {
  // PyTorch 1.13 and 2.8: CppNode/PyNode::apply make it with output_info_[i].zeros, one aten.zeros
  // (the ops torch 1.13 logs for loss.backward() of the same function in Python).
  const Tensor x = leaf({1, 2});
  OpLog log;
  {
    const variable_list out = TwoOutputs<true>::apply(x);
    const Tensor loss = sum(out[0]);
    ModeGuard guard(log);
    backward(loss);
  }
  testing::check_same_ops(log.ops, {"aten.ones_like.default", "aten.expand.default", "aten.zeros.default", "aten.mul.Tensor",
                                    "aten.mul.Tensor", "aten.add.Tensor", "aten.detach.default", "aten.detach.default"});
  CHECK(values(x.grad()) == std::vector<float>{2, 2});
  OpLog unmaterialized;
  {
    const variable_list out = TwoOutputs<false>::apply(x);
    const Tensor loss = sum(out[0]);
    ModeGuard guard(unmaterialized);
    backward(loss);
  }
  testing::check_same_ops(unmaterialized.ops,
                          {"aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor", "aten.add_.Tensor"});
  CHECK(values(x.grad()) == std::vector<float>{4, 4});
}

TEST_CASE("Function<T>: on a wrapper subclass, forward and backward ops reach its handler") {
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  Tensor x = tracer::LoggingTensor::wrap(vec({1, 2}), log, true);
  Tensor r = MulAdd::apply(x, vec({3, 4}));
  CHECK(r.grad_fn()->name() == "MulAddBackward");
  backward(sum(r));
  // PyTorch 1.13 (custom_function_reference.py, "logging_tensor").
  CHECK(*log == std::vector<std::string>{"aten.mul.Tensor", "aten.add.Tensor", "aten.sum.default", "aten.ones_like.default",
                                         "aten.expand.default", "aten.mul.Tensor", "aten.add.Tensor", "aten.mul.Tensor",
                                         "aten.detach.default", "aten.detach.default"});
  const tracer::LoggingTensor* grad = tracer::LoggingTensor::of(x.grad());
  REQUIRE(grad != nullptr);
  CHECK(values(grad->elem()) == std::vector<float>{4, 5});
}

TEST_CASE("Function<T>: CustomFunction (non-tensor arguments, saved_data, create_graph)") {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor y = leaf({-1, 0.5f, 2, 3});
  Tensor res = MulAddScaled::apply(x, std::int64_t{2}, y);
  Tensor go = tensor<float>({1.0f}, {});
  requires_grad_(go);
  backward(sum(res), go, false, true);
  CHECK(values(x.grad()) == values(y + ones_like(y)));
  CHECK(values(y.grad()) == values(x + mul(ones_like(x), Scalar(2))));
  CHECK(x.grad().requires_grad());  // create_graph: the backward was recorded
  set_grad(x, Tensor());  // break the leaf <-> gradient cycle create_graph makes (as in PyTorch)
  set_grad(y, Tensor());
}

TEST_CASE("Function<T>: an input returned as-is comes back as a view with the node (FunctionReturnsInput)") {
  Tensor x = leaf({1, 1});
  OpLog log;
  Tensor r;
  {
    ModeGuard guard(log);
    r = ReturnsInput::apply(x);
    backward(sum(r));
  }
  CHECK(!r.is_same(x));
  CHECK(x.is_leaf());
  CHECK(r.grad_fn()->name() == "ReturnsInputBackward");
  CHECK(r.raw_data() == x.raw_data());
  CHECK(log.ops == std::vector<std::string>{"aten.view.default", "aten.sum.default", "aten.ones_like.default",
                                            "aten.expand.default", "aten.add.Tensor", "aten.detach.default",
                                            "aten.detach.default"});
  CHECK(values(x.grad()) == std::vector<float>{2, 2});
}

TEST_CASE("Function<T>: grad mode off, or no input requiring grad, records nothing (NoGradInput)") {
  Tensor x = leaf({1, 2});
  {
    autograd::NoGradGuard no_grad;
    Tensor y = MulAdd::apply(x, x);
    CHECK(!y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
  }
  Tensor y = MulAdd::apply(vec({1, 2}), vec({3, 4}));
  CHECK(!y.requires_grad());
  CHECK(values(y) == std::vector<float>{4, 10});
}

namespace {
struct Dirty : Function<Dirty> {
  static Tensor forward(AutogradContext* ctx, const Tensor& v) {
    mul_(v, tensor<float>({2.0f}, {}));
    ctx->mark_dirty({v});
    return v;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {mul(g[0], Scalar(2))}; }
};
struct DirtyNotReturned : Function<DirtyNotReturned> {
  static Tensor forward(AutogradContext* ctx, const Tensor& v) {
    ctx->mark_dirty({v});
    return v * v;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};
}  // namespace

TEST_CASE("Function<T>: mark_dirty rebases the input's history and bumps its version (MarkDirty)") {
  Tensor base = leaf({1, 2, 3});
  Tensor x = clone(base);
  const std::uint32_t before = x.impl()->version();
  Tensor out = Dirty::apply(x);
  CHECK(out.is_same(x));  // returned as itself, unlike an unmodified input
  CHECK(x.impl()->version() == before + 2);  // the write and mark_dirty's bump, as in PyTorch
  CHECK(x.grad_fn()->name() == "DirtyBackward");
  backward(sum(out));
  CHECK(values(base.grad()) == std::vector<float>{2, 2, 2});
  // A leaf that requires grad may not be modified in place.
  CHECK_THROWS_WITH_AS(Dirty::apply(leaf({1.0f})), "a leaf Variable that requires grad has been used in an in-place operation.",
                       Error);
  CHECK_THROWS_WITH_AS(DirtyNotReturned::apply(clone(base)),
                       doctest::Contains("Some elements marked as dirty during the forward method were not returned as output"),
                       Error);
}

namespace {
struct InplaceAdd : Function<InplaceAdd> {
  static variable_list forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    ctx->mark_dirty({a});
    Tensor b2 = b + ones_like(b);
    return {add_(a, b), b2};
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0] + g[1]}; }
};
}  // namespace

TEST_CASE("Function<T>: a plain leaf modified in place gets the node (ReturnLeafInplace)") {
  Tensor x = vec({1, 2, 3});
  Tensor y = leaf({1, 1, 1});
  variable_list out = InplaceAdd::apply(x, y);
  CHECK(out[0].is_same(x));
  CHECK(values(x) == std::vector<float>{2, 3, 4});
  CHECK(out[0].requires_grad());
  backward(sum(out[0]));
  CHECK(values(y.grad()) == std::vector<float>{1, 1, 1});
}

namespace {
struct Mask : Function<Mask> {
  static variable_list forward(AutogradContext* ctx, const Tensor& v) {
    Tensor index = to(v, ScalarType::Int64);
    Tensor plain = v + ones_like(v);
    Tensor shifted = v + ones_like(v);
    ctx->mark_non_differentiable({index, plain});
    return {index, plain, shifted};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    CHECK(g[1].defined());  // materialized: zeros of the output's shape
    CHECK(values(g[1]) == std::vector<float>{0, 0});
    return {g[2]};
  }
};
}  // namespace

TEST_CASE("Function<T>: mark_non_differentiable outputs do not require grad (MarkNonDifferentiableMixed)") {
  Tensor x = leaf({1.5f, 2.5f});
  variable_list out = Mask::apply(x);
  CHECK(!out[0].requires_grad());
  CHECK(!out[1].requires_grad());
  CHECK(out[2].requires_grad());
  backward(sum(out[2]));
  CHECK(values(x.grad()) == std::vector<float>{1, 1});
}

namespace {
struct SaveEmpty : Function<SaveEmpty> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input) {
    ctx->save_for_backward({Tensor(), input, Tensor()});
    return input * input;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list saved = ctx->get_saved_variables();
    CHECK(!saved[0].defined());
    CHECK(!saved[2].defined());
    return {mul(saved[1], Scalar(2)) * g[0]};
  }
};
struct SaveOutput : Function<SaveOutput> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input) {
    Tensor out = exp(input);
    ctx->save_for_backward({out});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};
}  // namespace

TEST_CASE("Function<T>: saved tensors: undefined ones, outputs, the version check, the second backward") {
  Tensor x = leaf({1, 2, 3});
  backward(sum(SaveEmpty::apply(x)));
  CHECK(values(x.grad()) == std::vector<float>{2, 4, 6});

  // An output is saved without its history (no cycle) and unpacked with it.
  Tensor z = leaf({0, 1});
  Tensor e = SaveOutput::apply(z);
  backward(sum(e), Tensor(), true);
  CHECK(testing::max_abs_diff(z.grad(), {1.0, 2.718281828}) < 1e-6);
  backward(sum(e));  // retained once
  CHECK_THROWS_WITH_AS(backward(sum(e)), doctest::Contains("Trying to backward through the graph a second time"), Error);

  // Writing a saved input in place is caught when backward unpacks it.
  Tensor w = leaf({1, 2});
  Tensor input = clone(w);
  Tensor y = SaveEmpty::apply(input);
  mul_(input, tensor<float>({3.0f}, {}));
  CHECK_THROWS_WITH_AS(backward(sum(y)),
                       doctest::Contains("one of the variables needed for gradient computation has been modified by an inplace operation"),
                       Error);
}

namespace {
struct TooFew : Function<TooFew> {
  static Tensor forward(AutogradContext*, const Tensor& a, const Tensor& b) { return a * b; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};
struct TooMany : Function<TooMany> {
  static Tensor forward(AutogradContext*, const Tensor& a) { return a + a; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], Tensor(), Tensor()}; }
};
struct TooManyDefined : Function<TooManyDefined> {
  static Tensor forward(AutogradContext*, const Tensor& a) { return a + a; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};
struct GradForNumber : Function<GradForNumber> {
  static Tensor forward(AutogradContext*, const Tensor& a, double) { return a + a; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};
struct WrongShape : Function<WrongShape> {
  static Tensor forward(AutogradContext*, const Tensor& a) { return a + a; }
  static variable_list backward(AutogradContext*, variable_list) { return {vec({1, 2, 3, 4, 5})}; }
};
}  // namespace

TEST_CASE("Function<T>: wrong gradients from backward get PyTorch's errors (InvalidGradients, TooManyGrads)") {
  Tensor x = leaf({1, 2});
  CHECK_THROWS_WITH_AS(backward(sum(TooFew::apply(x, vec({1, 1})))),
                       "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)", Error);
  backward(sum(TooMany::apply(x)));  // extra undefined gradients are dropped
  CHECK(values(x.grad()) == std::vector<float>{1, 1});
  CHECK_THROWS_WITH_AS(backward(sum(TooManyDefined::apply(x))),
                       "function TooManyDefinedBackward returned an incorrect number of gradients (expected 1, got 2)", Error);
  CHECK_THROWS_WITH_AS(backward(sum(GradForNumber::apply(x, 2.0))),
                       doctest::Contains("returned a gradient different that is defined at position 2, but the corresponding "
                                         "forward input was not a Variable"),
                       Error);
  CHECK_THROWS_WITH_AS(backward(sum(WrongShape::apply(x))), doctest::Contains("but expected shape compatible with [2]"), Error);
}

namespace {
struct NeedsGrad : Function<NeedsGrad> {
  static inline std::vector<bool> seen;
  static Tensor forward(AutogradContext*, const Tensor& a, const Tensor& b) { return a * b; }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return {ctx->needs_input_grad(0) ? g[0] : Tensor(), ctx->needs_input_grad(1) ? g[0] : Tensor()};
  }
};
struct ListInput : Function<ListInput> {
  static Tensor forward(AutogradContext* ctx, const std::vector<Tensor>& ts) {
    ctx->save_for_backward({ts[0], ts[1]});
    return ts[0] * ts[1];
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list s = ctx->get_saved_variables();
    return {g[0] * s[1], g[0] * s[0]};
  }
};
}  // namespace

TEST_CASE("Function<T>: needs_input_grad, and tensor lists as inputs (CustomFunctionWithTensorList)") {
  Tensor x = leaf({1, 2});
  backward(sum(NeedsGrad::apply(x, vec({3, 4}))));
  CHECK(NeedsGrad::seen == std::vector<bool>{true, false});
  // In a pass that needs only one input's gradient, needs_input_grad asks the pass (PyTorch's
  // task_should_compute_output): autograd::grad with respect to y alone, or backward with inputs {y}.
  const Tensor y = leaf({3, 4});
  CHECK(values(autograd::grad({sum(NeedsGrad::apply(x, y))}, {y})[0]) == std::vector<float>{1, 1});
  CHECK(NeedsGrad::seen == std::vector<bool>{false, true});
  using V = std::vector<Tensor>;
  backward(V{sum(NeedsGrad::apply(x, y))}, V{}, std::nullopt, false, V{x});
  CHECK(NeedsGrad::seen == std::vector<bool>{true, false});
  CHECK_FALSE(y.grad().defined());
  Tensor a = leaf({1, 2});
  Tensor b = leaf({3, 4});
  backward(sum(ListInput::apply(std::vector<Tensor>{a, b})));
  CHECK(values(a.grad()) == std::vector<float>{3, 4});
  CHECK(values(b.grad()) == std::vector<float>{1, 2});
}

namespace {
struct Throws : Function<Throws> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a) {
    ctx->save_for_backward({a});
    return mm(a, a);  // a 1-D tensor: mm refuses it
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};
}  // namespace

TEST_CASE("Function<T>: a forward that throws leaves grad mode and the input as they were") {
  Tensor x = leaf({1, 2});
  CHECK_THROWS_AS(Throws::apply(x), Error);
  CHECK(autograd::is_grad_enabled());
  CHECK(x.is_leaf());
  CHECK(x.use_count() == 1);  // the node and its context are gone
}

TEST_CASE("Function<T>: node names drop namespaces and enclosing functions") {
  CHECK(autograd::detail::function_node_name<MulAdd>() == "MulAddBackward");
  CHECK(autograd::detail::function_node_name<autograd::Function<MulAdd>>() == "FunctionBackward");
}

namespace {
// test_autograd.py's NoneGradientFunction: returns its inputs, and None as y's gradient.
struct NoneGradientFunction : Function<NoneGradientFunction> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& y) {
    CHECK(ctx->needs_input_grad(0));
    CHECK_FALSE(ctx->needs_input_grad(1));
    return {x, y};
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], Tensor()}; }
};
struct Double : Function<Double> {
  static Tensor forward(AutogradContext*, const Tensor& a) { return mul(a, Scalar(2.0)); }
  static variable_list backward(AutogradContext*, variable_list g) { return {mul(g[0], Scalar(2.0))}; }
};
struct FirstOnly : Function<FirstOnly> {  // a + b, with None as b's gradient
  static Tensor forward(AutogradContext*, const Tensor& a, const Tensor& b) { return a + b; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], Tensor()}; }
};
}  // namespace

TEST_CASE("Function<T>: test_hook_none: a backward's None gradient, and hooks on both outputs") {
  // PyTorch 1.13 (scripts/reference/hook_none_reference.py): both outputs get the node (an input
  // returned as-is is a view with the node, needed or not), both hooks see a defined gradient (5s,
  // then 1s: the sum adds each row of rx to ry), y gets no gradient.
  Tensor x = randn({5, 5});
  requires_grad_(x);
  const Tensor y = randn({5, 5});
  variable_list r = NoneGradientFunction::apply(x, y);
  REQUIRE(r.size() == 2);
  std::vector<std::vector<float>> seen;
  auto hook = [&](const Tensor& grad) {
    CHECK(grad.defined());
    seen.push_back(values(grad));
    return Tensor();
  };
  register_hook(r[0], hook);
  register_hook(r[1], hook);
  CHECK(r[1].requires_grad());
  CHECK(r[0].grad_fn() == r[1].grad_fn());
  CHECK(r[0].grad_fn()->name() == "NoneGradientFunctionBackward");
  backward(sum(add(r[1], sum(r[0], {0}))));  // Python's sum(rx, ry): ry + rx[0] + ... + rx[4]
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::vector<float>(25, 5));
  CHECK(seen[1] == std::vector<float>(25, 1));
  CHECK(values(x.grad()) == std::vector<float>(25, 5));
  CHECK_FALSE(y.grad().defined());
}

TEST_CASE("Function<T>: a hook on a tensor whose gradient a backward returned as None sees None") {
  // PyTorch 1.13 (hook_none_reference.py): the hook on b runs with None and may leave it (returning
  // None); Double's backward then gets zeros (materialize_grads) and x.grad is [2, 2]. Replacing the
  // None raises LibTorch's CppFunctionTensorPreHook error (torch/csrc/autograd/cpp_hook.cpp;
  // Python's hook words it "can't replace a None gradient with a non-None value").
  for (bool replace : {false, true}) {
    CAPTURE(replace);
    Tensor x = leaf({1, 2});
    const Tensor a = Double::apply(x), b = Double::apply(x);
    std::vector<std::string> seen;
    register_hook(a, [&](const Tensor& g) {
      seen.push_back(g.defined() ? "a defined" : "a None");
      return Tensor();
    });
    register_hook(b, [&](const Tensor& g) {
      seen.push_back(g.defined() ? "b defined" : "b None");
      return replace ? vec({1, 1}) : Tensor();
    });
    const Tensor loss = sum(FirstOnly::apply(a, b));
    if (replace) {
      CHECK_THROWS_WITH_AS(backward(loss), "can't replace a empty gradient with a non-empty value", Error);
      continue;
    }
    backward(loss);
    CHECK(seen == std::vector<std::string>{"b None", "a defined"});
    CHECK(values(x.grad()) == std::vector<float>{2, 2});
  }
}

}  // namespace test_custom_function
