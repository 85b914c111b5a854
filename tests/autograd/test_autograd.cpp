// tests/autograd/test_autograd.cpp: autograd's user-facing behaviour: leaves and history, grad_fn
// names, backward with implicit and explicit gradients, retain_graph, grad mode, detach, the engine's
// sum_to and dtype handling and its order, in-place ops, create_graph, and the errors. AccumulateGrad's
// rules and sharing are test_accumulate_grad.cpp's.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/dispatcher.h"
#include "core/interpose/interposer.h"
#include "core/util/warning.h"
#include "nn/functional.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tests/tracer/cli/subprocess.h"

namespace test_autograd {  // Note [Test files in unity builds]

using namespace strata;
using testing::leaf;
using testing::OpLog;

TEST_CASE("leaves, history and grad_fn names follow PyTorch") {
  const Tensor w = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = leaf({0.5, -0.5});
  const Tensor x = tensor<float>({1, 0, 0, 0, 1, 0}, {2, 3});
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK(w.key_set().has(DispatchKey::Autograd));
  CHECK_FALSE(x.key_set().has(DispatchKey::Autograd));  // Note [Dispatch keys]

  const Tensor wt = t(w);
  const Tensor y = addmm(b, x, wt);
  const Tensor r = relu(y);
  const Tensor lp = _log_softmax(r, 1);
  const Tensor loss = std::get<0>(nll_loss_forward(lp, tensor<std::int64_t>({0, 1}), Tensor(), 1, -100));
  CHECK(wt.grad_fn()->name() == "TBackward0");
  CHECK(y.grad_fn()->name() == "AddmmBackward0");
  CHECK(r.grad_fn()->name() == "ReluBackward0");
  CHECK(lp.grad_fn()->name() == "LogSoftmaxBackward0");
  CHECK(loss.grad_fn()->name() == "NllLossBackward0");
  CHECK_FALSE(y.is_leaf());
  CHECK(y.requires_grad());
  CHECK(wt.grad_fn()->next_edge(0).function->name() == "AccumulateGrad");
  CHECK(y.grad_fn()->next_edge(1).function == nullptr);  // x needs no gradient
  CHECK(y.str() == "tensor([[1.5000, 3.5000],\n        [2.5000, 4.5000]], grad_fn=<AddmmBackward0>)");
  CHECK(b.str() == "tensor([ 0.5000, -0.5000], requires_grad=True)");
  CHECK(y.grad_fn()->sequence_nr() > wt.grad_fn()->sequence_nr());
}

TEST_CASE("backward of a scalar uses ones_like; gradients accumulate across backward calls") {
  const Tensor a = leaf({1, 2, 3});
  backward(sum(mul(a, a)));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  const Tensor grad_before = a.grad();
  backward(sum(a));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{3, 5, 7});
  CHECK(a.grad().is_same(grad_before));  // later gradients are added in place
  set_grad(a, Tensor());
  CHECK_FALSE(a.grad().defined());
}

TEST_CASE("explicit gradients, retain_graph and the second-backward error") {
  const Tensor a = leaf({1, 2});
  const Tensor y = mul(a, a);  // saves a: backward twice needs retain_graph
  backward(y, tensor<float>({1, 10}), true);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{2, 40});
  backward(y, tensor<float>({1, 1}));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{4, 44});
  CHECK_THROWS_WITH_AS(backward(y, tensor<float>({1, 1})),
                       "Trying to backward through the graph a second time (or directly access saved tensors after they "
                       "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
                       "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second "
                       "time or if you need to access saved tensors after calling backward.",
                       Error);
}

TEST_CASE("backward errors") {
  const Tensor a = leaf({1, 2, 3});
  CHECK_THROWS_WITH_AS(backward(tensor<float>({1})), "element 0 of tensors does not require grad and does not have a grad_fn", Error);
  CHECK_THROWS_WITH_AS(backward(mul(a, a)), "grad can be implicitly created only for scalar outputs", Error);
  CHECK_THROWS_WITH_AS(backward(mul(a, a), tensor<float>({1, 1})),
                       "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
                       "torch.Size([3]).",
                       Error);
  CHECK_THROWS_WITH_AS(requires_grad_(tensor<std::int64_t>({1})),
                       "only Tensors of floating point and complex dtype can require gradients (got int64)", Error);
  CHECK_THROWS_WITH_AS(requires_grad_(mul(a, a), false),
                       "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in "
                       "a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                       Error);
  CHECK_THROWS_WITH_AS(add_(a, tensor<float>({1, 1, 1})),
                       "[aten::add_] a leaf Variable that requires grad is being used in an in-place operation.", Error);
  // A non-differentiable op's output has no history, so there is nothing to differentiate through.
  CHECK_THROWS_WITH_AS(backward(sum(ones_like(a))), "element 0 of tensors does not require grad and does not have a grad_fn",
                       Error);
  // PyTorch 2.8's wording (1.13 said "assigned grad has data of a different size").
  CHECK_THROWS_WITH_AS(set_grad(a, tensor<float>({1})),
                       "attempting to assign a gradient of size '[1]' to a tensor of size '[3]'. Please ensure that the gradient "
                       "and the tensor are the same size",
                       Error);
  CHECK_THROWS_WITH_AS(set_grad(a, a), "can't assign Variable as its own grad", Error);
  CHECK_THROWS_WITH_AS(set_grad(a, strata::empty({3}, {.device = Device::Meta})),
                       "attempting to assign a gradient with device type 'meta' to a tensor with device type 'cpu'. Please ensure "
                       "that the gradient and the tensor are on the same device",
                       Error);
  CHECK_THROWS_WITH_AS(set_grad(a, tensor<double>({1, 2, 3})),
                       "attempting to assign a gradient with dtype 'float64' to a tensor with dtype 'float32'. Please ensure that "
                       "the gradient and the tensor have the same dtype",
                       Error);
  CHECK_THROWS_WITH_AS(set_grad(Tensor(), a), "cannot assign a gradient to an undefined Tensor", Error);
  CHECK_THROWS_WITH_AS(backward(std::vector<Tensor>{sum(mul(a, a)), sum(a)}, std::vector<Tensor>{scalar_tensor(1.0, ScalarType::Float32)}),
                       "got 2 tensors and 1 gradients", Error);
  CHECK_THROWS_WITH_AS(backward(Tensor()), "backward: element 0 of tensors is an undefined Tensor (expected a defined output)",
                       Error);
}

// log_softmax twice differentiated: x.grad and v.grad and the formulas' ops from PyTorch 1.13
// (torch.manual_seed(0); x, v = randn(2, 3); g = autograd.grad(log_softmax(x, 1), x, v,
// create_graph=True); autograd.grad(g, (x, v), u) under a TorchDispatchMode).
TEST_CASE("log_softmax's double backward (LogSoftmaxBackwardDataBackward0) equals PyTorch's") {
  const Tensor x = tensor<float>({1.5409960746765137f, -0.293428897857666f, -2.1787893772125244f, 0.5684312582015991f,
                                  -1.0845223665237427f, -1.3985954523086548f},
                                 {2, 3});
  const Tensor v = tensor<float>({0.40334683656692505f, 0.8380263447761536f, -0.7192575931549072f, -0.40334352850914f,
                                  -0.5966353416442871f, 0.18203648924827576f},
                                 {2, 3});
  const Tensor u = tensor<float>({-0.8566746115684509f, 1.1006041765213013f, -1.0711873769760132f, 0.1227012425661087f,
                                  -0.5663174986839294f, 0.3731146454811096f},
                                 {2, 3});
  requires_grad_(x);
  requires_grad_(v);
  backward(_log_softmax(x, 1, false), v, std::nullopt, /*create_graph=*/true);
  const Tensor g = x.grad();
  REQUIRE(g.grad_fn() != nullptr);
  CHECK(g.grad_fn()->name() == "CopyBackwards");  // .grad made under create_graph, as in PyTorch
  std::vector<std::string> next;
  for (const autograd::Edge& e : g.grad_fn()->next_edges())
    if (e.valid()) next.emplace_back(e.function->name());
  CHECK(next == std::vector<std::string>{"LogSoftmaxBackwardDataBackward0"});
  set_grad(x, Tensor());
  testing::OpLog log;
  {
    ModeGuard mode(log);
    backward(g, u);
  }
  const std::vector<std::string> formulas(log.ops.begin(), log.ops.begin() + std::min<std::size_t>(log.ops.size(), 9));
  CHECK(formulas == std::vector<std::string>{"aten.exp.default", "aten.mul.Tensor", "aten.sum.dim_IntList", "aten.sub.Tensor",
                                             "aten.exp.default", "aten.sum.dim_IntList", "aten.neg.default", "aten.mul.Tensor",
                                             "aten.mul.Tensor"});
  CHECK(std::count(log.ops.begin(), log.ops.end(), "aten._log_softmax_backward_data.default") == 1);
  const std::vector<double> gx{0.11449620872735977, -0.11956454068422318, 0.005068304017186165,
                               0.04472007974982262, -0.07249394059181213, 0.02777385711669922};
  const std::vector<double> gv{-0.2596305012702942, 1.697648286819458, -0.47414326667785645,
                               0.07279036939144135, -0.6162283420562744, 0.32320377230644226};
  CHECK(testing::max_abs_diff(x.grad(), gx) < 1e-6);
  CHECK(testing::max_abs_diff(v.grad(), gv) < 1e-6);
}

// Note [Arguments without a formula]: PyTorch 1.13 and 2.8 raise this at the forward, whether or not the
// input requires grad, and not under no_grad.
TEST_CASE("a tensor argument without a derivative formula may not require grad") {
  namespace F = nn::functional;
  const Tensor x = tensor<float>({0.5f, -1.f, 2.f, 0.f, 1.f, 3.f}, {2, 3});
  const Tensor target = tensor<std::int64_t>({0, 2});
  const Tensor weight = tensor<float>({1.f, 2.f, 3.f});
  requires_grad_(weight);
  const char* message = "[aten::nll_loss_forward] The function 'nll_loss_forward' is not differentiable with respect to "
                        "argument 'weight'. This input cannot have requires_grad True.";
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, target, {.weight = weight}), message, Error);
  const Tensor xg = clone(x);
  requires_grad_(xg);
  CHECK_THROWS_WITH_AS(F::nll_loss(xg, target, {.weight = weight}), message, Error);
  autograd::NoGradGuard no_grad;
  CHECK(F::nll_loss(xg, target, {.weight = weight}).defined());
}

TEST_CASE("grad mode and detach stop recording") {
  const Tensor a = leaf({1, 2});
  {
    autograd::NoGradGuard no_grad;
    CHECK_FALSE(autograd::is_grad_enabled());
    const Tensor y = mul(a, a);
    CHECK_FALSE(y.requires_grad());
    add_(a, tensor<float>({1, 1}));  // in-place on a leaf is allowed without grad mode
    // The Autograd key still runs (it only redispatches), as PyTorch's VariableType kernel does
    // under no_grad; only the untraced fast path skips it (Note [Transparent keys]).
    std::ostringstream trace;
    {
      DispatchTraceGuard guard(trace);
      CHECK_FALSE(neg(a).requires_grad());
    }
    CHECK(trace.str() ==
          "aten.neg.default(f32[2]) [Autograd, CPU] -> Autograd: fallback autograd\n"
          "  aten.neg.default(f32[2]) [CPU] -> CPU: kernel neg\n"
          "  autograd: not recorded (grad mode is off)\n");
    {
      autograd::GradModeGuard enable(true);
      CHECK(mul(a, a).requires_grad());
    }
  }
  CHECK(autograd::is_grad_enabled());
  const Tensor d = detach(a);
  CHECK_FALSE(d.requires_grad());
  CHECK(d.impl()->storage().get() == a.impl()->storage().get());
  CHECK_FALSE(mul(d, d).requires_grad());
  CHECK_FALSE(ones_like(a).requires_grad());  // non-differentiable op
}

TEST_CASE("the engine reduces broadcast gradients with sum_to and casts them to the input's dtype") {
  const Tensor row = leaf({1, 2, 3});
  const Tensor m = leaf({1, 1, 1, 1, 1, 1}, {2, 3});
  backward(sum(mul(add(m, row), tensor<float>({1, 2}, {2, 1}))));
  CHECK(row.grad().to_vector<float>() == std::vector<float>{3, 3, 3});
  CHECK(m.grad().to_vector<float>() == std::vector<float>{1, 1, 1, 2, 2, 2});
  const Tensor f32 = leaf({1, 2});
  const Tensor f64 = tensor<double>({3, 4});
  const Tensor y = mul(f32, f64);
  CHECK(y.dtype() == ScalarType::Float64);
  backward(sum(y));
  CHECK(f32.grad().dtype() == ScalarType::Float32);
  CHECK(f32.grad().to_vector<float>() == std::vector<float>{3, 4});
}

TEST_CASE("backward flows through non-contiguous views") {
  const Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = mul(view(contiguous(t(a)), {6}), tensor<float>({1, 2, 3, 4, 5, 6}));
  backward(sum(y));
  // t(a) laid out row-major is [1,4,2,5,3,6]; the weights land back on a's positions.
  CHECK(a.grad().to_vector<float>() == std::vector<float>{1, 3, 5, 2, 4, 6});
  const Tensor b = leaf({1, 2});
  backward(sum(mul(expand(unsqueeze(b, 0), {3, 2}), tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}))));
  CHECK(b.grad().to_vector<float>() == std::vector<float>{9, 12});
  const Tensor c = leaf({1, 2, 3, 4}, {2, 2});
  backward(sum(mul(squeeze(unsqueeze(transpose(c, 0, 1), 0), 0), tensor<float>({1, 0, 0, 0}, {2, 2}))));
  CHECK(c.grad().to_vector<float>() == std::vector<float>{1, 0, 0, 0});
}

TEST_CASE("in-place ops on non-leaves rebase history") {
  const Tensor a = leaf({1, 2});
  Tensor h = mul(a, tensor<float>({3, 3}));
  add_(h, a);  // h = 3a + a
  CHECK(h.grad_fn()->name() == "AddBackward0");
  mul_(h, a);  // h = 4a * a: MulBackward0 reads the original h
  CHECK(h.grad_fn()->name() == "MulBackward0");
  backward(sum(h));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{8, 16});
  // derivatives.yaml numbers entries of one base name in file order: fill.Scalar, fill.Tensor, fill_.Scalar.
  const Tensor f = mul(a, a);
  fill_(f, 3.0);
  CHECK(f.grad_fn()->name() == "FillBackward2");
}

TEST_CASE("create_graph records the backward, so gradients can be differentiated again") {
  const Tensor x = leaf({3});  // x = 3 tells x^3, 3x^2 and 6x apart (27, 27, 18)
  const Tensor y = mul(mul(x, x), x);
  backward(y, Tensor(), std::nullopt, /*create_graph=*/true);
  const Tensor g = x.grad();  // 3x^2 = 27, with history
  CHECK(g.item<float>() == 27);
  CHECK(g.requires_grad());
  set_grad(x, Tensor());
  backward(g);
  CHECK(x.grad().item<float>() == 18);  // 6x
}

namespace {
constexpr const char* kCreateGraphWarning =
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient which "
    "can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you have to use "
    "this function, make sure to reset the .grad fields of your parameters to None after use to break the cycle and avoid "
    "the leak.";
constexpr const char* kWarnOnceChild = "backward with create_graph warns once per process (run in a fresh process)";
}  // namespace

// Run by the next test in a fresh process (STRATA_WARN_ONCE warns once per process, and any test
// before it in this executable may have warned already); skipped in a normal run.
TEST_CASE(kWarnOnceChild * doctest::skip()) {
  struct Collector : WarningHandler {
    std::vector<std::string> messages;
    void process(const Warning& w) override {
      messages.push_back(w.msg());
      WarningHandler::process(w);  // and print it as the default handler does, for the parent to read
    }
  } collector;
  const WarningHandlerGuard guard(&collector);
  const Tensor x = leaf({3});
  backward(mul(x, x));  // no create_graph: no warning
  CHECK(collector.messages.empty());
  set_grad(x, Tensor());
  for (int i = 0; i < 3; ++i) backward(mul(x, x), Tensor(), std::nullopt, /*create_graph=*/true);
  REQUIRE(collector.messages.size() == 1);  // PyTorch's TORCH_WARN_ONCE in Engine::execute
  CHECK(collector.messages[0] == kCreateGraphWarning);
  CHECK(x.grad().requires_grad());  // the cycle it warns of: x.grad's history holds x's AccumulateGrad
  set_grad(x, Tensor());            // which the advice breaks (and LeakSanitizer would report otherwise)
}

TEST_CASE("backward with create_graph warns once per process, in PyTorch's words") {
  const std::string out = "/tmp/strata_test_warn_once." + std::to_string(getpid());
  const pid_t pid = testing::spawn_child({"/proc/self/exe", "--no-skip", std::string("-tc=") + kWarnOnceChild}, out + ".out",
                                         out + ".err");
  REQUIRE(pid > 0);
  const testing::ChildExit exit = testing::wait_child(pid);
  const std::string child_out = testing::read_text(out + ".out");
  const std::string child_err = testing::read_text(out + ".err");
  std::remove((out + ".out").c_str());
  std::remove((out + ".err").c_str());
  INFO(child_out << child_err);
  CHECK_FALSE(exit.signaled);
  CHECK(exit.code == 0);
  CHECK(child_out.find("1 passed") != std::string::npos);  // the child test ran, and passed
  const std::string line = std::string("Warning: ") + kCreateGraphWarning + "\n";
  const std::size_t first = child_err.find(line);
  CHECK(first != std::string::npos);
  CHECK(child_err.find(line, first + 1) == std::string::npos);  // printed once
}

TEST_CASE("several roots start from a GraphRoot") {
  const Tensor a = leaf({1, 2});
  backward({sum(a), sum(mul(a, a))}, {});
  CHECK(a.grad().to_vector<float>() == std::vector<float>{3, 5});
}

TEST_CASE("a graph hundreds of thousands of ops deep is differentiated and freed without deep recursion") {
  // Recursive teardown overflows the stack well below this depth (Note [Deep graphs are torn down
  // without recursion]); mul(y, y) gives each node two edges to the same node and saved inputs
  // holding it too.
  constexpr int kDepth = 300000;
  const Tensor x = leaf({1, 1});
  {
    Tensor y = x;
    for (int i = 0; i < kDepth; ++i) y = mul(y, y);
  }
  {
    Tensor y = x;
    for (int i = 0; i < kDepth; ++i) y = relu(y);
    backward(sum(y));
  }
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 1});
}

TEST_CASE("a node's input gradients die before its outputs are delivered, so a passed-through one is added in place") {
  // As in PyTorch's engine (call_function's inputs die before evaluate_function adds the outputs to the
  // next input buffers): CloneBackward0 passes its gradient t3 through to x's AccumulateGrad, which
  // then holds the only reference, so MulBackward0's gradient for x is added into t3 in place (add_, a
  // version bump) and AccumulateGrad steals t3. If the clone's input buffer still held t3, the sum
  // would be out of place and x.grad a fresh tensor at version 0.
  const Tensor x = leaf({1, 2, 3});
  const Tensor e = mul(x, tensor<float>({5, 5, 5}));  // MulBackward0, sequence 0: runs last
  const Tensor c = mul(clone(x), tensor<float>({3, 3, 3}));
  backward(add(c, e), tensor<float>({1, 1, 1}));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{8, 8, 8});
  CHECK(x.grad().impl()->version() == 1);
}

TEST_CASE("a graph wider and larger than the engine's inline room runs in PyTorch's order") {
  // 40 products summed by a chain of adds: every AddBackward0 leaves a MulBackward0 in the ready queue
  // (more than its inline room of 16), and the tasks, edges and input buffers outgrow theirs. The
  // MulBackward0s must still run from the most recent to the oldest.
  struct MulLog : DispatchMode {
    std::vector<float> factors;
    std::string_view name() const override { return "MulLog"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {
      if (op.str() == "aten.mul.Tensor") factors.push_back(stack.back().to_tensor().item().to<float>());
      op.call(stack);
    }
  };
  constexpr int kWidth = 40;
  std::vector<Tensor> leaves;
  std::vector<Tensor> products;
  for (int k = 0; k < kWidth; ++k) {
    leaves.push_back(leaf({1}));
    products.push_back(mul(leaves.back(), tensor<float>({static_cast<float>(k + 1)})));
  }
  Tensor total = products[0];
  for (int k = 1; k < kWidth; ++k) total = add(total, products[static_cast<std::size_t>(k)]);
  MulLog log;
  {
    ModeGuard guard(log);
    backward(sum(total));
  }
  REQUIRE(log.factors.size() == kWidth);
  for (int k = 0; k < kWidth; ++k) {
    CHECK(log.factors[static_cast<std::size_t>(k)] == static_cast<float>(kWidth - k));
    CHECK(leaves[static_cast<std::size_t>(k)].grad().to_vector<float>() == std::vector<float>{static_cast<float>(k + 1)});
  }
}

TEST_CASE("an op without a derivative row runs without grad mode and refuses to record with it") {
  // Registered after autograd (in the namespace the join test skips), so the derivative table has no
  // row for it; the handler checks grad mode before it looks for one.
  const Tensor x = leaf({1, 2});
  static const OperatorHandle op = Dispatcher::singleton().def(
      "test", "no_row_twice(Tensor self) -> Tensor",
      {[](const OperatorHandle&, DispatchKeySet, Stack& stack) { stack.back() = IValue(mul(stack.back().to_tensor(), 2.0)); },
       "twice"},
      {});
  const auto call = [](const Tensor& t) {
    Stack stack;
    stack.emplace_back(t);
    op.call(stack);
    return stack.back().to_tensor();
  };
  CHECK_THROWS_WITH_AS(call(x),
                       "[test::no_row_twice] the derivative for 'test::no_row_twice' is not implemented (no derivative row)",
                       Error);
  autograd::NoGradGuard no_grad;
  const Tensor y = call(x);
  CHECK(y.to_vector<float>() == std::vector<float>{2, 4});
  CHECK_FALSE(y.requires_grad());
}

// PyTorch 1.13's values (2.8's formulas are the same): pow(x, e).backward(ones), with x and e at the
// points pow_backward_self and pow_backward_exponent mask. 0^0 = 1 with both gradients 0 (unmasked,
// 0 * 0^-1 would be NaN and 1 * log(0) -inf); 0^2 has an exponent gradient of 0; 0^-1 keeps its infinities.
TEST_CASE("pow.Tensor_Tensor's gradients are masked where PyTorch masks them") {
  const Tensor x = requires_grad_(tensor<float>({0, 0, 0, 2, 0.5f, 0}));
  const Tensor e = requires_grad_(tensor<float>({0, 2, 0.5f, 0, -1, -1}));
  const Tensor y = pow(x, e);
  CHECK(y.grad_fn()->name() == "PowBackward1");
  backward(y, ones_like(y));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(y.to_vector<double>() == std::vector<double>{1, 0, 0, 1, 2, inf});
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 0, inf, 0, -4, -inf});
  const std::vector<double> ge = e.grad().to_vector<double>();
  const std::vector<double> want{0, 0, 0, 0.6931471824645996, -1.3862943649291992, -inf};
  REQUIRE(ge.size() == want.size());
  for (std::size_t i = 0; i < ge.size(); ++i) {
    if (std::isinf(want[i])) CHECK(ge[i] == want[i]);
    else CHECK(ge[i] == doctest::Approx(want[i]).epsilon(1e-6));
  }
}

}  // namespace test_autograd
