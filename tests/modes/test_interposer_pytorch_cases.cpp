// tests/modes/test_interposer_pytorch_cases.cpp: cases of PyTorch's test/test_python_dispatch.py,
// against what real PyTorch logs (tests/golden/interposer_torch.json, from
// scripts/reference/interposer_reference.py): a handler's own detach under nested modes, the detach of
// factory outputs a mode keeps, subclass priority and NotImplemented, a handler's None, wrapper
// version counters, and a handler that forgets to call through.
#include <set>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "modes/logging_tensor.h"
#include "modes/op_counter.h"

namespace test_interposer_pytorch_cases {  // Note [Test files in unity builds]

using namespace strata;
using strata::testing::read_golden_json;
using Log = std::vector<std::string>;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = read_golden_json("interposer_torch.json");
  return g;
}
Log golden_log(const nlohmann::json& j) { return j.get<Log>(); }

// Logs "<name> enter <op>" and "<name> exit <op>" around calling through.
struct EnterExit : DispatchMode {
  EnterExit(std::string name, Log& log) : name_(std::move(name)), log_(log) {}
  std::string_view name() const override { return name_; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    log_.push_back(name_ + " enter " + op.str());
    op.call(stack);
    log_.push_back(name_ + " exit " + op.str());
  }
  std::string name_;
  Log& log_;
};

// Logs op names; with keep, also keeps every tensor it returns.
struct OpLog : DispatchMode {
  explicit OpLog(bool keep) : keep_(keep) {}
  std::string_view name() const override { return "OpLog"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    ops.push_back(op.str());
    op.call(stack);
    if (keep_) for_each_return_tensor(op, stack, [&](Tensor& t) { kept.push_back(t); });
  }
  bool keep_;
  Log ops;
  std::vector<Tensor> kept;
};

// The reference's Wrapper, A and B(A): unwrap, run, log "<Type> <op>", rewrap as its own type; a type
// named in `decline` returns NotImplemented.
struct Shared {
  Log log;
  std::set<std::string> decline;
  bool none_on_add = false;
};

class A : public TensorSubclass {
 public:
  A(Tensor elem, std::shared_ptr<Shared> shared) : elem_(std::move(elem)), shared_(std::move(shared)) {}
  static Tensor wrap(IntrusivePtr<A> payload) {
    const Tensor e = payload->elem_;
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(payload.get()), e.sizes(), e.strides(), 0, e.dtype(), e.device());
  }
  std::string_view type_name() const override { return "A"; }
  bool type_includes(const TensorSubclass& other) const override { return type_includes_as<A>(*this, other); }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    shared_->log.push_back(std::string(type_name()) + " " + op.str());
    if (shared_->decline.count(std::string(type_name()))) return return_not_implemented();
    for_each_argument_tensor(op, stack, [](Tensor& t) {
      if (const auto* a = t.defined() ? dynamic_cast<const A*>(t.subclass()) : nullptr) t = a->elem_;
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [&](Tensor& t) {
      if (t.defined()) t = rewrap(t);
    });
    if (shared_->none_on_add && op.name().name == "add") stack.back() = IValue();  // Python's `return None`
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"elem"}, {elem_}, shared_}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override { return rewrap(flat.inner[0]); }
  virtual Tensor rewrap(const Tensor& e) const { return wrap(IntrusivePtr<A>(new A(e, shared_))); }
  const Tensor& elem() const { return elem_; }

 protected:
  Tensor elem_;
  std::shared_ptr<Shared> shared_;
};

class B final : public A {
 public:
  using A::A;
  std::string_view type_name() const override { return "B"; }
  bool type_includes(const TensorSubclass& other) const override { return type_includes_as<B>(*this, other); }
  Tensor rewrap(const Tensor& e) const override { return wrap(IntrusivePtr<A>(new B(e, shared_))); }
};

Tensor make_a(const Tensor& e, const std::shared_ptr<Shared>& s) { return A::wrap(IntrusivePtr<A>(new A(e, s))); }
Tensor make_b(const Tensor& e, const std::shared_ptr<Shared>& s) { return A::wrap(IntrusivePtr<A>(new B(e, s))); }
std::string type_of(const Tensor& t) { return t.defined() && t.subclass() ? std::string(t.subclass()->type_name()) : "Tensor"; }

}  // namespace

TEST_CASE("a handler's own detach is wrapped again: two nested modes log PyTorch's 10 entries") {
  const Tensor x = randn({2});
  Log log;
  EnterExit outer("outer", log), inner("inner", log);
  {
    ModeGuard o(outer);
    ModeGuard i(inner);
    detach(x);
  }
  CHECK(log == golden_log(golden()["nested_modes_detach"]));
}

TEST_CASE("detach of a wrapper inside a mode: the subclass logs 3 detaches and the mode 2, as in PyTorch") {
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  const Tensor x = tracer::LoggingTensor::wrap(randn({2}), log);
  OpLog mode(false);
  {
    ModeGuard g(mode);
    detach(x);
  }
  CHECK(mode.ops == golden_log(golden()["wrapper_detach_in_mode"]["mode"]));
  Log expected;
  for (const std::string& entry : golden_log(golden()["wrapper_detach_in_mode"]["subclass"]))
    expected.push_back(entry.substr(entry.find(' ') + 1));  // "Wrapper aten.detach.default" -> the op
  CHECK(*log == expected);
}

TEST_CASE("factory outputs a mode keeps get a detach (make_variable), those it drops do not") {
  const Tensor x = randn({2});
  for (const bool keep : {true, false}) {
    OpLog mode(keep);
    {
      ModeGuard g(mode);
      ones_like(x);
      empty({2});
    }
    CHECK(mode.ops == golden_log(golden()[keep ? "factories_kept" : "factories_dropped"]));
  }
}

TEST_CASE("backward()'s implicit ones_like is a factory call too") {
  for (const bool keep : {true, false}) {
    Tensor w = tensor<float>({1, 2});
    requires_grad_(w);
    const Tensor loss = sum(mul(w, w));
    OpLog mode(keep);
    {
      ModeGuard g(mode);
      backward(loss);
    }
    REQUIRE(mode.ops.size() >= 3);
    CHECK(Log(mode.ops.begin(), mode.ops.begin() + 3) ==
          golden_log(golden()[keep ? "backward_ones_like_kept" : "backward_ones_like_dropped"]));
  }
}

TEST_CASE("a subclass goes before the type it derives from, and NotImplemented passes to the next handler") {
  auto shared = std::make_shared<Shared>();
  const Tensor a = make_a(ones_like(randn({2})), shared);
  const Tensor b = make_b(ones_like(randn({2})), shared);

  auto run = [&](std::set<std::string> decline) {
    shared->log.clear();
    shared->decline = std::move(decline);
    nlohmann::json out;
    try {
      out["result"] = type_of(add(a, b));
    } catch (const Error& e) {
      out["result"] = "TypeError";
      out["error"] = e.what();
    }
    out["log"] = shared->log;
    return out;
  };
  const nlohmann::json handled = run({});
  CHECK(handled["log"] == golden()["priority"]["log"]);
  CHECK(handled["result"] == golden()["priority"]["result"]);
  const nlohmann::json b_declines = run({"B"});
  CHECK(b_declines["log"] == golden()["priority_b_declines"]["log"]);
  CHECK(b_declines["result"] == golden()["priority_b_declines"]["result"]);
  const nlohmann::json all_decline = run({"A", "B"});
  CHECK(all_decline["log"] == golden()["priority_all_decline"]["log"]);
  CHECK(all_decline["result"] == golden()["priority_all_decline"]["result"]);
  CHECK(all_decline["error"].get<std::string>().find(
            "Multiple dispatch failed for 'aten.add.Tensor'; all __torch_dispatch__ handlers returned NotImplemented:\n\n"
            "  - tensor subclass B\n  - tensor subclass A\n") != std::string::npos);
  // Order of appearance does not matter: b first gives the same.
  shared->log.clear();
  shared->decline.clear();
  CHECK(type_of(add(b, a)) == "B");
  CHECK(shared->log == Log{"B aten.add.Tensor"});
}

TEST_CASE("a mode that returns NotImplemented passes to the subclasses, and stays active for them") {
  auto shared = std::make_shared<Shared>();
  const Tensor a = make_a(ones_like(randn({2})), shared);
  const Tensor b = make_b(ones_like(randn({2})), shared);
  struct Declining : DispatchMode {
    Log log;
    std::string_view name() const override { return "Declining"; }
    void dispatch(const OperatorHandle& op, Stack&) override {
      log.push_back("mode " + op.str());
      return_not_implemented();
    }
  } mode;
  std::string error;
  {
    ModeGuard g(mode);
    try {
      add(a, b);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  CHECK(mode.log == golden_log(golden()["declining_mode"]["mode"]));
  CHECK(shared->log == golden_log(golden()["declining_mode"]["subclass"]));
  CHECK(golden()["declining_mode"]["result"] == "TypeError");
  CHECK(error.find("Multiple dispatch failed for 'aten.add.Tensor'; all __torch_dispatch__ handlers returned "
                   "NotImplemented:\n\n  - mode object Declining\n") != std::string::npos);
}

TEST_CASE("a handler may return None for a Tensor result, and the caller receives it (test_none_wrapping)") {
  auto shared = std::make_shared<Shared>();
  shared->none_on_add = true;
  Tensor x = make_a(rand({2}), shared);
  CHECK(golden()["none_wrapping"]["mul"] == "NoneOnAdd");
  CHECK(type_of(mul(x, x)) == "A");
  CHECK(golden()["none_wrapping"]["add"] == "None");
  CHECK_FALSE(add(x, x).defined());
}

// Logs each op, calls through, and returns None for the ops named.
struct NoneFor : DispatchMode {
  explicit NoneFor(std::set<std::string> ops) : ops_(std::move(ops)) {}
  std::string_view name() const override { return "NoneFor"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    log.push_back(op.str());
    op.call(stack);
    if (ops_.count(op.name().name)) stack.back() = IValue();  // Python's `return None`
  }
  std::set<std::string> ops_;
  Log log;
};

TEST_CASE("a handler's None where autograd records the op: recorded anyway, and the caller receives it") {
  // PyTorch's VariableType records the node and set_history gives an undefined output
  // Node::undefined_input() (torch/csrc/autograd/VariableTypeUtils.h); an in-place op rebases self's
  // history and returns self. Numbers and logs from 1.13 (interposer_reference.py, none_recorded).
  const nlohmann::json& g = golden()["none_recorded"];
  auto shared = std::make_shared<Shared>();
  shared->none_on_add = true;
  Tensor w = make_a(rand({2}), shared);
  requires_grad_(w);
  CHECK(g["subclass_add"] == "None");
  CHECK_FALSE(add(w, w).defined());

  Tensor x = tensor<float>({1, 2});
  requires_grad_(x);
  NoneFor mode({"mul", "view", "exp"});
  Tensor product, view, exponential, kept;
  {
    ModeGuard guard(mode);
    product = mul(x, x);
    view = strata::view(x, {2, 1});
    exponential = exp(x);  // its node saves the None it returned
    kept = neg(x);
  }
  CHECK(g["mul"] == "None");
  CHECK_FALSE(product.defined());
  CHECK(g["view"] == "None");
  CHECK_FALSE(view.defined());
  CHECK(g["exp"] == "None");
  CHECK_FALSE(exponential.defined());
  CHECK(mode.log == golden_log(g["log"]));
  backward(sum(kept));
  CHECK(x.grad().to_vector<float>() == g["x_grad_after"].get<std::vector<float>>());

  Tensor a = tensor<float>({1, 2});
  requires_grad_(a);
  const Tensor y = mul(a, 3.0);
  const Tensor ones_ = tensor<float>({1, 1});
  NoneFor inplace({"add_"});
  Tensor result;
  {
    ModeGuard guard(inplace);
    result = add_(y, ones_);
  }
  const nlohmann::json& gi = g["add_"];
  CHECK(gi["result_is_self"] == true);
  CHECK(result.is_same(y));
  CHECK(inplace.log == golden_log(gi["log"]));
  REQUIRE(y.grad_fn());
  CHECK(std::string(y.grad_fn()->name()) == gi["grad_fn"].get<std::string>());
  CHECK(y.to_vector<float>() == gi["value"].get<std::vector<float>>());
  backward(sum(y));
  CHECK(a.grad().to_vector<float>() == gi["a_grad"].get<std::vector<float>>());
}

TEST_CASE("a mode that never calls through is caught, naming the mode and the op") {
  struct Forgetful : DispatchMode {
    std::string_view name() const override { return "Forgetful"; }
    void dispatch(const OperatorHandle&, Stack&) override {}
  } forgetful;
  const Tensor x = tensor<float>({1, -1});
  {
    ModeGuard g(forgetful);
    CHECK_THROWS_WITH_AS(relu(x),
                         doctest::Contains("the dispatch mode Forgetful handled aten.relu.default but left its arguments "
                                           "on the stack"),
                         Error);
    CHECK_THROWS_WITH_AS(zero_(x), doctest::Contains("Forgetful handled aten.zero_.default but left its arguments"), Error);
  }
  CHECK(x.to_vector<float>() == std::vector<float>{1, -1});

  // Returning an argument is a return, not a forgotten call: zero_ returns self, and a handler may
  // hand back its input explicitly.
  struct Identity : DispatchMode {
    std::string_view name() const override { return "Identity"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {
      if (op.name().name == "zero_") return op.call(stack);
      Tensor self = stack.back().to_tensor();
      stack.pop_back();
      stack.emplace_back(std::move(self));
    }
  } identity;
  ModeGuard g(identity);
  CHECK(relu(x).is_same(x));
  CHECK(zero_(x).is_same(x));
  CHECK(x.to_vector<float>() == std::vector<float>{0, 0});
}

TEST_CASE("a forgotten call is caught even when the handler's own work reallocated the stack") {
  // The handler pushes and pops more values than the stack holds inline, so its buffer moves; its
  // arguments are still the ones it was handed (Note [A handler's arguments are marked]).
  struct Busy : DispatchMode {
    std::string_view name() const override { return "Busy"; }
    void dispatch(const OperatorHandle&, Stack& stack) override {
      const std::size_t size = stack.size(), capacity = stack.capacity();
      while (stack.capacity() == capacity) stack.emplace_back(std::int64_t{1});
      stack.truncate(size);
    }
  } busy;
  const Tensor x = tensor<float>({1, -1});
  ModeGuard g(busy);
  CHECK_THROWS_WITH_AS(relu(x), doctest::Contains("the dispatch mode Busy handled aten.relu.default but left its arguments"),
                       Error);
  CHECK_THROWS_WITH_AS(add(x, x), doctest::Contains("Busy handled aten.add.Tensor but left its arguments"), Error);
}

TEST_CASE("a subclass that never calls through is caught, naming the subclass and the op") {
  struct Lazy final : TensorSubclass {
    std::string_view type_name() const override { return "Lazy"; }
    void dispatch(const OperatorHandle&, Stack&) override {}
    FlattenedTensor flatten(const Tensor&) const override { return {}; }
    Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return {}; }
  };
  const Tensor w = make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new Lazy), {2}, {1}, 0, ScalarType::Float32, Device::CPU);
  CHECK_THROWS_WITH_AS(neg(w), doctest::Contains("Lazy.__torch_dispatch__ handled aten.neg.default but left its arguments"),
                       Error);
}

TEST_CASE("under nested modes, AccumulateGrad's detach is wrapped again as a plain detach(x) is") {
  // PyTorch 2.8's AccumulateGrad stores new_grad.detach() (1.13 does not, so there is no 1.13 golden
  // for this tail): the same call as detach(x) above, so the same 10 entries end the backward.
  Tensor w = tensor<float>({1, 2});
  requires_grad_(w);
  const Tensor loss = sum(mul(w, w));
  Log log;
  EnterExit outer("outer", log), inner("inner", log);
  {
    ModeGuard o(outer);
    ModeGuard i(inner);
    backward(loss);
  }
  const Log expected = golden_log(golden()["nested_modes_detach"]);
  REQUIRE(log.size() >= expected.size());
  CHECK(Log(log.end() - static_cast<std::ptrdiff_t>(expected.size()), log.end()) == expected);
}

TEST_CASE("a wrapper has a version counter that in-place ops bump, shared with its detach (test_version)") {
  const nlohmann::json& ref = golden()["version"];
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  const Tensor x = tracer::LoggingTensor::wrap(randn({1}), log);
  CHECK(x.impl()->version() == ref["before"].get<std::uint32_t>());
  const Tensor d = detach(x);
  add_(d, ones_like(d));
  CHECK(x.impl()->version() == ref["after_detach_add_"].get<std::uint32_t>());
  CHECK(d.impl()->version() == x.impl()->version());
  zero_(x);
  CHECK(d.impl()->version() == ref["after_detach_add_"].get<std::uint32_t>() + 1);
  // An out-of-place op makes a wrapper with a counter of its own.
  const Tensor y = neg(x);
  CHECK(y.impl()->version() == 0);
}

TEST_CASE("a recorded view of a wrapper counts its base's writes, so backward refuses what it saved") {
  // Note [A wrapper's view counts its base's writes]: b.add_(v * v) with v = b.t() bumps v's version
  // too, and the backward through the product names v as PyTorch does.
  const nlohmann::json& ref = golden()["view_version"];
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  const Tensor a = tracer::LoggingTensor::wrap(ones_like(randn({3, 3})), log, /*requires_grad=*/true);
  testing::write_base_of_saved_view(a, ref["view"].get<std::uint32_t>(), ref["base"].get<std::uint32_t>(),
                                    ref["error"].get<std::string>());
}

}  // namespace test_interposer_pytorch_cases
