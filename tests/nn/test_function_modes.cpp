// tests/nn/test_function_modes.cpp: function modes (core/interpose/function_mode.h) and module hooks
// (nn/module_hooks.h, nn/mod_tracker.h) against tests/golden/function_modes_torch.json
// (scripts/reference/function_mode_reference.py), and their protocol and error paths.
#include <charconv>
#include <set>
#include <thread>

#include "autograd/backward.h"
#include "core/interpose/function_mode.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/mod_tracker.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/test_helpers.h"

namespace test_function_modes {  // Note [Test files in unity builds]

using namespace strata;

namespace {

using nlohmann::json;

const json& golden() {
  static const json all = testing::read_golden_json("function_modes_torch.json");
  return all;
}

// The golden's rendering of an argument: upstream DebugMode's tensor shorthand, Python reprs.
std::string render(const IValue& v) {
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.to_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.to_int());
  if (v.is_double()) {
    char text[32];
    std::string s(text, std::to_chars(text, text + sizeof(text), v.to_double()).ptr);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  if (v.tag() == IValue::Tag::String) return "'" + std::string(v.to_string_view()) + "'";
  if (v.tag() == IValue::Tag::IntList) return shape_str(v.to_int_list());
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    const char* abbr = t.dtype() == ScalarType::Float32 ? "f32"
                       : t.dtype() == ScalarType::Int64 ? "i64"
                       : t.dtype() == ScalarType::Float64 ? "f64"
                                                          : "b8";
    return std::string("t: ") + abbr + shape_str(t.sizes());
  }
  return std::string("<") + std::string(v.tag_name()) + ">";
}

// Records every call it sees (name, repr name, rendered arguments) and calls through.
class Recorder final : public FunctionMode {
 public:
  std::string_view name() const override { return "Recorder"; }
  void torch_function(FunctionCall& call) override {
    json entry{{"phase", phase}, {"name", call.name()}, {"repr_name", call.repr_name()}};
    entry["args"] = json::array();
    for (const IValue& a : call.args()) entry["args"].push_back(render(a));
    entry["kwargs"] = json::object();
    for (const auto& [k, v] : call.kwargs()) entry["kwargs"][std::string(k)] = render(v);
    calls.push_back(entry);
    call.call_through();
  }
  std::string phase;
  json calls = json::array();
};

// Logs "<tag> enter/exit <name>", optionally calling torch.add itself first (golden "nested").
class Logger final : public FunctionMode {
 public:
  Logger(std::string tag, std::vector<std::string>& log, bool extra = false) : tag_(std::move(tag)), log_(log), extra_(extra) {}
  std::string_view name() const override { return tag_; }
  void torch_function(FunctionCall& call) override {
    log_.push_back(tag_ + " enter " + std::string(call.name()));
    if (extra_) add(call.args()[0].to_tensor(), Scalar(1));
    call.call_through();
    log_.push_back(tag_ + " exit " + std::string(call.name()));
  }

 private:
  std::string tag_;
  std::vector<std::string>& log_;
  bool extra_;
};

// Counts the aten ops that reach the dispatcher's Python key.
class AtenLog final : public DispatchMode {
 public:
  std::string_view name() const override { return "AtenLog"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    ops.push_back(op.str());
    op.call(stack);
  }
  std::vector<std::string> ops;
};

struct Seed {
  std::shared_ptr<nn::Sequential> model;
  Tensor x, y;
  std::unique_ptr<optim::SGD> opt;
};

Seed make_seed(FunctionMode* construction_mode = nullptr) {
  std::optional<FunctionModeGuard> guard;
  if (construction_mode) guard.emplace(*construction_mode);
  Seed s;
  manual_seed(0);
  s.model = nn::make_mlp({16, 32, 4});
  Generator g;
  g.manual_seed(1);
  s.x = randn({8, 16}, {}, &g);
  s.y = randint(0, 4, {8}, {}, &g);
  s.opt = std::make_unique<optim::SGD>(s.model->parameters(), optim::SGDOptions{.lr = 0.1});
  return s;
}

TEST_CASE("function modes: the MLP step announces what PyTorch's TorchFunctionMode sees") {
  Seed s = make_seed();
  Recorder rec;
  {
    FunctionModeGuard guard(rec);
    rec.phase = "forward";
    const Tensor logits = (*s.model)(s.x);
    const Tensor loss = nn::functional::cross_entropy(logits, s.y);
    rec.phase = "backward";
    backward(loss);
    rec.phase = "optimizer";
    s.opt->step();
  }
  json expected = json::array();
  for (const json& c : golden()["seed_step"]) {
    if (!c["strata"].get<bool>()) continue;
    json e = c;
    e.erase("strata");
    expected.push_back(e);
  }
  CHECK(rec.calls.dump(1) == expected.dump(1));
}

TEST_CASE("function modes: making the seed's model and batch announces PyTorch's calls") {
  Recorder rec;
  make_seed(&rec);
  std::vector<std::string> names, expected;
  for (const json& c : rec.calls) names.push_back(c["name"]);
  for (const json& c : golden()["construction"])
    if (c["strata"].get<bool>()) expected.push_back(c["name"]);
  CHECK(names == expected);
}

TEST_CASE("function modes: nested modes see what PyTorch's do") {
  std::vector<std::string> log;
  const Tensor x = ones_like(empty({2, 3})), w = ones_like(empty({4, 3})), b = ones_like(empty({4}));
  {
    Logger outer("outer", log);
    FunctionModeGuard g1(outer);
    Logger inner("inner", log, /*extra=*/true);
    FunctionModeGuard g2(inner);
    CHECK(function_mode_stack_size() == 2);
    nn::functional::linear(x, w, b);
    mm(x, t(w));
  }
  CHECK(log == golden()["nested"].get<std::vector<std::string>>());
  CHECK(function_mode_stack_size() == 0);
  CHECK_FALSE(function_modes_enabled());
}

TEST_CASE("function modes: a method is announced as the method, an operator as the method it calls") {
  // x.sum() is torch.Tensor.sum, sum(x) torch.sum, x + y torch.Tensor.add, z -= y torch.Tensor.sub_;
  // arguments left at their defaults are not passed (golden "methods").
  const Tensor x = ones({2, 3}), y = full({2, 3}, 2.0), w = ones({3, 4}), z = zeros({2, 3});
  Recorder rec;
  {
    FunctionModeGuard guard(rec);
    (void)x.sum(), (void)x.sum({1}, true), (void)sum(x);
    (void)(x + y), (void)(x - y), (void)(x * y), (void)(x / y), (void)(-x), (void)(x + 1), (void)(2.0 * x);
    (void)(x / 2.0), (void)(1.0 - x), (void)(2.0 / x);
    (void)x.add(y), (void)x.add(y, 2), (void)add(x, y), (void)x.mm(w), (void)mm(x, w);
    (void)x.t(), (void)x.transpose(0, 1), (void)x.unsqueeze(0), (void)x.view({6}), (void)x.reshape({3, 2});
    (void)x.clone(), (void)x.detach(), (void)detach(x), (void)x.exp(), (void)x.relu(), (void)x.neg();
    (void)x.mean(), (void)x.softmax(1), (void)x.max(), (void)x.max(1), (void)x.argmax();
    z += y, z -= y, z *= y, z *= 2.0, z.add_(y), z.mul_(y), z.zero_(), z.fill_(1.0), z.copy_(y);
  }
  json expected = golden()["methods"];
  REQUIRE(rec.calls.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    rec.calls[i].erase("phase");
    CHECK_MESSAGE(rec.calls[i] == expected[i], i);
  }
}

TEST_CASE("function modes: the calls inside a function are not announced; its aten ops are dispatched") {
  const Tensor x = ones_like(empty({2, 3})), w = ones_like(empty({4, 3})), b = ones_like(empty({4}));
  Recorder rec;
  AtenLog aten;
  ModeGuard dispatch_guard(aten);
  {
    FunctionModeGuard guard(rec);
    nn::functional::linear(x, w, b);
  }
  REQUIRE(rec.calls.size() == 1);
  CHECK(rec.calls[0]["name"] == "torch.nn.functional.linear");
  CHECK(rec.calls[0]["repr_name"] == "torch._C._nn.linear");
  CHECK(aten.ops == std::vector<std::string>{"aten.t.default", "aten.addmm.default"});
}

// Replaces torch.mm's result, with or without running it.
class ReplaceMm final : public FunctionMode {
 public:
  explicit ReplaceMm(bool through) : through_(through) {}
  std::string_view name() const override { return "ReplaceMm"; }
  void torch_function(FunctionCall& call) override {
    if (call.name() != "torch.mm") return call.call_through();
    if (through_) {
      call.call_through();
      seen = call.result().to_tensor();
      call.set_result(IValue(mul(seen, Scalar(2.0))));  // a mode's own call: not announced to itself
    } else {
      call.set_result(IValue(zeros_like(call.args()[0].to_tensor())));
    }
  }
  Tensor seen;

 private:
  bool through_;
};

TEST_CASE("function modes: a mode replaces the result, calling through or not") {
  const Tensor a = ones_like(empty({2, 2})), b = ones_like(empty({2, 2}));
  SUBCASE("without running the function") {
    ReplaceMm mode(false);
    AtenLog aten;
    ModeGuard dispatch_guard(aten);
    FunctionModeGuard guard(mode);
    const Tensor r = mm(a, b);
    CHECK(r.to_vector<double>() == std::vector<double>{0, 0, 0, 0});
    CHECK(aten.ops == std::vector<std::string>{"aten.zeros_like.default"});  // no aten.mm
  }
  SUBCASE("after calling through") {
    ReplaceMm mode(true);
    FunctionModeGuard guard(mode);
    const Tensor r = mm(a, b);
    CHECK(mode.seen.to_vector<double>() == std::vector<double>{2, 2, 2, 2});
    CHECK(r.to_vector<double>() == std::vector<double>{4, 4, 4, 4});
  }
}

// Answers every call with a fixed value, or nothing.
class Answer final : public FunctionMode {
 public:
  explicit Answer(IValue v, bool set = true) : value_(std::move(v)), set_(set) {}
  std::string_view name() const override { return "Answer"; }
  void torch_function(FunctionCall& call) override {
    if (set_) call.set_result(value_);
  }

 private:
  IValue value_;
  bool set_;
};

TEST_CASE("function modes: results a function cannot return are errors naming the mode") {
  const Tensor a = ones_like(empty({2}));
  SUBCASE("no result") {
    Answer mode(IValue(), false);
    FunctionModeGuard guard(mode);
    CHECK_THROWS_WITH_AS(relu(a),
                         "the function mode Answer handled torch.relu but set no result: it must call "
                         "call.call_through() (PyTorch's func(*args, **kwargs)) or call.set_result()",
                         Error);
  }
  SUBCASE("a number for a tensor") {
    Answer mode(IValue(std::int64_t{3}));
    FunctionModeGuard guard(mode);
    CHECK_THROWS_WITH_AS(relu(a), "the result of torch.relu set by the function mode Answer is int; expected a Tensor",
                         Error);
  }
  SUBCASE("another tensor for an in-place function") {
    Answer mode(IValue(ones_like(a)));
    FunctionModeGuard guard(mode);
    CHECK_THROWS_WITH_AS(add_(a, a),
                         "the result of torch.Tensor.add_ set by the function mode Answer is Tensor; expected its "
                         "argument self (an in-place function returns its self)",
                         Error);
  }
  SUBCASE("None for a tensor is an undefined tensor, as a dispatch handler's") {
    Answer mode{IValue()};
    FunctionModeGuard guard(mode);
    CHECK_FALSE(relu(a).defined());
  }
  CHECK(function_mode_stack_size() == 0);
}

// Throws, before or after calling through.
class Thrower final : public FunctionMode {
 public:
  explicit Thrower(bool after) : after_(after) {}
  std::string_view name() const override { return "Thrower"; }
  void torch_function(FunctionCall& call) override {
    if (after_) call.call_through();
    throw Error("thrown by a mode");
  }

 private:
  bool after_;
};

TEST_CASE("function modes: a mode that throws leaves every stack as it was") {
  const Tensor a = ones_like(empty({2, 2}));
  for (bool after : {false, true}) {
    CAPTURE(after);
    std::vector<std::string> log;
    Logger outer("outer", log);
    AtenLog aten;
    ModeGuard dispatch_guard(aten);
    FunctionModeGuard g1(outer);
    {
      Thrower thrower(after);
      FunctionModeGuard g2(thrower);
      CHECK_THROWS_WITH_AS(mm(a, a), "thrown by a mode", Error);
      CHECK(function_mode_stack_size() == 2);
      CHECK(current_function_mode() == &thrower);
      CHECK(function_modes_enabled());
      CHECK(mode_stack_size() == 1);
      CHECK(current_mode() == &aten);
    }
    // The outer mode saw the call through (only when the thrower called through), and sees the next.
    CHECK(log == (after ? std::vector<std::string>{"outer enter torch.mm", "outer exit torch.mm"} : std::vector<std::string>{}));
    log.clear();
    relu(a);
    CHECK(log == std::vector<std::string>{"outer enter torch.relu", "outer exit torch.relu"});
  }
  CHECK(function_mode_stack_size() == 0);
  CHECK(mode_stack_size() == 0);
}

TEST_CASE("function modes: a function that throws below a mode restores the stack") {
  Recorder rec;
  FunctionModeGuard guard(rec);
  const Tensor a = ones_like(empty({2, 3}));
  CHECK_THROWS_AS(mm(a, a), Error);  // the shapes do not multiply
  CHECK(function_mode_stack_size() == 1);
  CHECK(current_function_mode() == &rec);
  CHECK(function_modes_enabled());
}

TEST_CASE("function modes: DisableFunctionModes hides calls; no mode announces nothing") {
  const Tensor a = ones_like(empty({2}));
  Recorder rec;
  CHECK_FALSE(function_modes_enabled());
  relu(a);
  {
    FunctionModeGuard guard(rec);
    {
      DisableFunctionModes off;
      CHECK_FALSE(function_modes_enabled());
      {
        DisableFunctionModes again;
        relu(a);
      }
      CHECK_FALSE(function_modes_enabled());
      relu(a);
    }
    CHECK(function_modes_enabled());
    neg(a);
  }
  REQUIRE(rec.calls.size() == 1);
  CHECK(rec.calls[0]["name"] == "torch.neg");
}

TEST_CASE("function modes: arguments are found by name; keyword-only ones are keywords") {
  const Tensor a = ones_like(empty({2}));
  struct Peek final : FunctionMode {
    std::string_view name() const override { return "Peek"; }
    void torch_function(FunctionCall& call) override {
      if (call.name() == "torch.add") {
        REQUIRE(call.find("alpha"));
        alpha = call.find("alpha")->to_double();
        positional = call.args().size();
        CHECK(call.find("other")->is_tensor());
        CHECK(call.find("nothing") == nullptr);
      }
      call.call_through();
    }
    double alpha = 0;
    std::size_t positional = 0;
  } peek;
  FunctionModeGuard guard(peek);
  add(a, a, 2.5);
  CHECK(peek.alpha == 2.5);
  CHECK(peek.positional == 2);
}

TEST_CASE("function modes are per thread" * doctest::test_suite("threads")) {
  Recorder rec;
  FunctionModeGuard guard(rec);
  const Tensor a = ones_like(empty({2}));
  rec.calls = json::array();
  std::thread other([] {
    CHECK_FALSE(function_modes_enabled());
    relu(ones_like(empty({2})));
  });
  other.join();
  CHECK(rec.calls.empty());
}

// ---- module hooks ----

std::shared_ptr<nn::Sequential> nested_model() {
  auto inner = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Linear>(3, 3), std::make_shared<nn::ReLU>()});
  return std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Linear>(4, 3), inner, std::make_shared<nn::Linear>(3, 2)});
}

TEST_CASE("module hooks: order and names for a nested Sequential match PyTorch's") {
  auto model = nested_model();
  nn::ModTracker tracker;
  std::vector<std::string> log;
  auto pre = nn::register_module_forward_pre_hook([&](nn::Module& m, const Tensor&) -> std::optional<Tensor> {
    log.push_back("pre " + tracker.fqn(m));
    return std::nullopt;
  });
  auto post = nn::register_module_forward_hook([&](nn::Module& m, const Tensor&, const Tensor& out) -> std::optional<Tensor> {
    log.push_back("post " + tracker.fqn(m) + " " + shape_str(out.sizes()));
    return std::nullopt;
  });
  tracker.fqn(*model);  // the root first, as upstream's tracker sees it
  const Tensor x = ones_like(empty({5, 4}));
  (*model)(x);
  pre.remove();
  post.remove();
  pre.remove();  // idempotent
  (*model)(x);
  CHECK(log == golden()["module_hooks"].get<std::vector<std::string>>());
  CHECK_FALSE(nn::detail::module_hooks_registered());
}

TEST_CASE("module hooks: a pre-hook replaces the input, a forward hook the output") {
  auto model = std::make_shared<nn::ReLU>();
  auto pre = nn::register_module_forward_pre_hook(
      [](nn::Module&, const Tensor& in) -> std::optional<Tensor> { return neg(in); });
  auto post = nn::register_module_forward_hook(
      [](nn::Module&, const Tensor&, const Tensor& out) -> std::optional<Tensor> { return add(out, Scalar(1)); });
  const Tensor x = ones_like(empty({2}));
  CHECK((*model)(x).to_vector<double>() == std::vector<double>{1, 1});  // relu(-1) + 1
  pre.remove();
  post.remove();
}

TEST_CASE("ModTracker: parents, user hooks, and a module called alone first") {
  auto model = nested_model();
  nn::ModTracker tracker;
  std::vector<std::string> log;
  tracker.register_user_hooks(
      [&](nn::Module& m, const Tensor&) {
        const auto parents = tracker.parents();
        log.push_back("> " + tracker.fqn(m) + " " + std::to_string(parents.size()));
      },
      [&](nn::Module& m, const Tensor&, const Tensor&) { log.push_back("< " + tracker.fqn(m)); });
  CHECK_THROWS_WITH_AS(tracker.register_user_hooks([](nn::Module&, const Tensor&) {}, nullptr),
                       "Only one pre_fw_hook and one post_fw_hook can be registered at a time. Clear the existing hook "
                       "by calling ``clear_user_hooks`` before registering a new one",
                       Error);
  tracker.enter();
  const auto& first = model->named_children()[0].second;
  (*first)(ones_like(empty({1, 4})));  // seen alone: named by its type
  (*model)(ones_like(empty({1, 4})));  // the parent renames its children, as upstream's
  tracker.exit();
  (*model)(ones_like(empty({1, 4})));  // not tracked any more
  CHECK(log == std::vector<std::string>{"> Linear 2", "< Linear", "> Sequential 2", "> Sequential.0 3", "< Sequential.0",
                                        "> Sequential.1 3", "> Sequential.1.0 4", "< Sequential.1.0", "> Sequential.1.1 4",
                                        "< Sequential.1.1", "< Sequential.1", "> Sequential.2 3", "< Sequential.2",
                                        "< Sequential"});
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  CHECK(*tracker.known_fqn(*first) == "Sequential.0");
}

TEST_CASE("module hooks: a hook that throws leaves every stack as it was") {
  auto model = nested_model();
  nn::ModTracker tracker;
  int depth = 0;  // what DebugMode keeps: entered minus left
  tracker.register_user_hooks([&](nn::Module&, const Tensor&) { ++depth; },
                              [&](nn::Module&, const Tensor&, const Tensor&) { --depth; });
  tracker.enter();
  Recorder rec;
  AtenLog aten;
  ModeGuard dispatch_guard(aten);
  FunctionModeGuard function_guard(rec);
  SUBCASE("a pre-hook") {
    auto bad = nn::register_module_forward_pre_hook([&](nn::Module& m, const Tensor&) -> std::optional<Tensor> {
      if (tracker.fqn(m) == "Sequential.1.0") throw Error("pre-hook failed");
      return std::nullopt;
    });
    CHECK_THROWS_WITH_AS((*model)(ones_like(empty({1, 4}))), "pre-hook failed", Error);
    bad.remove();
  }
  SUBCASE("a forward hook") {
    auto bad = nn::register_module_forward_hook([&](nn::Module& m, const Tensor&, const Tensor&) -> std::optional<Tensor> {
      if (tracker.fqn(m) == "Sequential.1.1") throw Error("hook failed");
      return std::nullopt;
    });
    CHECK_THROWS_WITH_AS((*model)(ones_like(empty({1, 4}))), "hook failed", Error);
    bad.remove();
  }
  SUBCASE("forward itself") {
    CHECK_THROWS_AS((*model)(ones_like(empty({1, 5}))), Error);  // 5 features into Linear(4, 3)
  }
  CHECK(depth == 0);
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  CHECK(function_mode_stack_size() == 1);
  CHECK(mode_stack_size() == 1);
  tracker.exit();
  CHECK_FALSE(nn::detail::module_hooks_registered());
}

}  // namespace
}  // namespace test_function_modes
