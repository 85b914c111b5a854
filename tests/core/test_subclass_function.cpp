// tests/core/test_subclass_function.cpp: a tensor subclass's torch_function hook (Note [A subclass
// takes function calls]) against what PyTorch's __torch_function__ sees
// (tests/golden/subclass_function_torch.json, from scripts/reference/subclass_function_reference.py):
// a LoggingTensor-like wrapper logging function and dispatch calls of a small program, a function
// mode before the subclass, and the priority of a derived type with NotImplemented; then the
// protocol's errors, the disabled hook, and the counter of Note [One test per call].
#include <set>
#include <thread>

#include "core/interpose/function_mode.h"
#include "core/interpose/subclass.h"
#include "nn/functional.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_subclass_function {  // Note [Test files in unity builds]

using namespace strata;
using Log = std::vector<std::string>;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = testing::read_golden_json("subclass_function_torch.json");
  return g;
}
Log golden_log(const nlohmann::json& j) { return j.get<Log>(); }


// The reference's LoggingTensor: "function <name>" from torch_function (then through, with subclass
// hooks disabled), "dispatch <op>" from dispatch (unwrap, run, rewrap).
class FunctionLoggingTensor final : public TensorSubclass {
 public:
  static Tensor wrap(const Tensor& elem, std::shared_ptr<Log> log) {
    IntrusivePtr<TensorSubclass> payload(new FunctionLoggingTensor(elem, std::move(log)));
    return make_wrapper_tensor(std::move(payload), elem.sizes(), elem.strides(), 0, elem.dtype(), elem.device());
  }
  static const FunctionLoggingTensor* of(const Tensor& t) {
    return t.defined() ? dynamic_cast<const FunctionLoggingTensor*>(t.subclass()) : nullptr;
  }
  std::string_view type_name() const override { return "LoggingTensor"; }
  void torch_function(FunctionCall& call) override {
    log_->push_back("function " + std::string(call.name()));
    seen_subclass_functions_enabled = subclass_functions_enabled();
    call.call_through();
  }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    log_->push_back("dispatch " + op.str());
    for_each_argument_tensor(op, stack, [](Tensor& t) {
      if (const auto* lt = of(t)) t = lt->elem_;
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [&](Tensor& t) {
      if (t.defined()) t = wrap(t, log_);
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"elem"}, {elem_}, log_}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override {
    return wrap(flat.inner[0], log_);
  }
  const Tensor& elem() const { return elem_; }
  static inline bool seen_subclass_functions_enabled = true;

 private:
  FunctionLoggingTensor(Tensor elem, std::shared_ptr<Log> log)
      : TensorSubclass(TakesFunctionCalls{}), elem_(std::move(elem)), log_(std::move(log)) {}
  Tensor elem_;
  std::shared_ptr<Log> log_;
};

// The reference's A and B(A): non-wrapper subclasses whose torch_function logs "<Type> <name>" and
// declines when its type is in `decline`; their ops run below the Python key.
struct Shared {
  Log log;
  std::set<std::string> decline;
};

class A : public TensorSubclass {
 public:
  explicit A(std::shared_ptr<Shared> shared) : TensorSubclass(TakesFunctionCalls{}), shared_(std::move(shared)) {}
  std::string_view type_name() const override { return "A"; }
  bool type_includes(const TensorSubclass& other) const override { return type_includes_as<A>(*this, other); }
  void torch_function(FunctionCall& call) override {
    shared_->log.push_back(std::string(type_name()) + " " + std::string(call.name()));
    if (shared_->decline.count(std::string(type_name()))) return return_not_implemented();
    call.call_through();
  }
  void dispatch(const OperatorHandle& op, Stack& stack) override { call_below_python(op, stack); }
  FlattenedTensor flatten(const Tensor&) const override { return {}; }
  Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }

 protected:
  std::shared_ptr<Shared> shared_;
};

class B final : public A {
 public:
  using A::A;
  std::string_view type_name() const override { return "B"; }
  bool type_includes(const TensorSubclass& other) const override { return type_includes_as<B>(*this, other); }
};

std::string type_of(const Tensor& t) { return t.defined() && t.subclass() ? std::string(t.subclass()->type_name()) : "Tensor"; }

// Logs "mode <name>" and calls through.
class LogMode final : public FunctionMode {
 public:
  explicit LogMode(Log& log) : log_(log) {}
  std::string_view name() const override { return "LogMode"; }
  void torch_function(FunctionCall& call) override {
    log_.push_back("mode " + std::string(call.name()));
    call.call_through();
  }

 private:
  Log& log_;
};

}  // namespace

TEST_CASE("a subclass logs the function calls and dispatch calls of a program as PyTorch's __torch_function__") {
  auto log = std::make_shared<Log>();
  const Tensor x = FunctionLoggingTensor::wrap(ones({2, 3}), log);
  const Tensor w = FunctionLoggingTensor::wrap(ones({4, 3}), log);
  const Tensor b = FunctionLoggingTensor::wrap(ones({4}), log);
  const Tensor y = nn::functional::linear(x, w, b);
  const Tensor z = relu(y);
  sum(z);
  const Tensor m = mm(x, t(w));
  const Tensor a = add(m, m, 2);
  add_(a, y);
  a.detach();
  mul(ones({2}), ones({2}));
  const Tensor out = add(ones({4}), b);
  const auto& g = golden()["program"];
  CHECK(*log == golden_log(g["log"]));
  CHECK(type_of(out) == g["add_result"].get<std::string>());
  REQUIRE(FunctionLoggingTensor::of(out));
  CHECK(FunctionLoggingTensor::of(out)->elem().data_ptr<float>()[0] == g["add_value"][0].get<float>());
  CHECK_FALSE(FunctionLoggingTensor::seen_subclass_functions_enabled);  // the hook ran with hooks off
  CHECK(subclass_functions_enabled());
}

TEST_CASE("a function mode sees the call first; its call through reaches the subclass") {
  auto log = std::make_shared<Log>();
  const Tensor x = FunctionLoggingTensor::wrap(ones({2, 3}), log);
  const Tensor w = FunctionLoggingTensor::wrap(ones({3, 4}), log);
  LogMode mode(*log);
  {
    FunctionModeGuard guard(mode);
    mm(x, w);
  }
  CHECK(*log == golden_log(golden()["mode_then_subclass"]));
}

TEST_CASE("subclass priority: the derived type first, NotImplemented passes on, all declining is an error") {
  for (const char* which : {"priority", "priority_b_declines", "priority_all_decline"}) {
    CAPTURE(which);
    auto shared = std::make_shared<Shared>();
    if (std::string(which) == "priority_b_declines") shared->decline = {"B"};
    if (std::string(which) == "priority_all_decline") shared->decline = {"A", "B"};
    const Tensor a = make_subclass(IntrusivePtr<TensorSubclass>(new A(shared)), ones({2}));
    const Tensor b = make_subclass(IntrusivePtr<TensorSubclass>(new B(shared)), ones({2}));
    std::string result;
    try {
      result = type_of(add(a, b));
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("on types that implement __torch_function__: [B, A]") != std::string::npos);
      result = "TypeError: " + what.substr(0, what.find(" on types"));
    }
    CHECK(shared->log == golden_log(golden()[which]["log"]));
    CHECK(result == golden()[which]["result"].get<std::string>());
  }
}

namespace {
// A hook that answers with a value of its own, or with nothing.
class Answering final : public TensorSubclass {
 public:
  explicit Answering(IValue answer, bool answer_nothing = false)
      : TensorSubclass(TakesFunctionCalls{}), answer_(std::move(answer)), nothing_(answer_nothing) {}
  std::string_view type_name() const override { return "Answering"; }
  void torch_function(FunctionCall& call) override {
    ++calls;
    if (!nothing_) call.set_result(answer_);
  }
  void dispatch(const OperatorHandle& op, Stack& stack) override { call_below_python(op, stack); }
  FlattenedTensor flatten(const Tensor&) const override { return {}; }
  Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }
  int calls = 0;

 private:
  IValue answer_;
  bool nothing_;
};
}  // namespace

TEST_CASE("a subclass hook may replace the result; a missing or wrong result is an error naming it") {
  const Tensor answer = ones({3});
  auto* payload = new Answering(IValue(answer));
  const Tensor x = make_subclass(IntrusivePtr<TensorSubclass>(payload), ones({2}));
  CHECK(relu(x).is_same(answer));  // the function did not run
  CHECK(payload->calls == 1);
  const Tensor y = make_subclass(IntrusivePtr<TensorSubclass>(new Answering(IValue(std::int64_t{3}))), ones({2}));
  CHECK_THROWS_WITH_AS(relu(y), "the result of torch.relu set by Answering.__torch_function__ is int; expected a Tensor",
                       Error);
  const Tensor z = make_subclass(IntrusivePtr<TensorSubclass>(new Answering(IValue(), true)), ones({2}));
  CHECK_THROWS_WITH_AS(relu(z),
                       "Answering.__torch_function__ handled torch.relu but set no result: it must call "
                       "call.call_through(), call.set_result() or return_not_implemented()",
                       Error);
  CHECK(subclass_functions_enabled());  // the guard unwound with the throw
}

TEST_CASE("no hook runs under DisableFunctionModes or DisableSubclassFunctions, or for a Tensor? argument's absence") {
  auto* payload = new Answering(IValue(ones({3})));
  const Tensor x = make_subclass(IntrusivePtr<TensorSubclass>(payload), ones({2}));
  {
    DisableSubclassFunctions off;
    CHECK(relu(x).size(0) == 2);
  }
  {
    DisableFunctionModes off;
    CHECK_FALSE(subclass_functions_enabled());
    CHECK(relu(x).size(0) == 2);
  }
  CHECK(payload->calls == 0);
  CHECK(relu(x).size(0) == 3);  // the hook again
  // A subclass in a Tensor? argument counts (linear's bias), a plain first argument does not hide it.
  auto log = std::make_shared<Log>();
  const Tensor bias = FunctionLoggingTensor::wrap(ones({4}), log);
  nn::functional::linear(ones({2, 3}), ones({4, 3}), bias);
  REQUIRE_FALSE(log->empty());
  CHECK(log->front() == "function torch.nn.functional.linear");
}

TEST_CASE("the layer's counter follows mode guards and hooked payloads; plain payloads do not count") {
  const bool before = detail::function_layer_in_use();
  CHECK_FALSE(before);
  {
    auto log = std::make_shared<Log>();
    const Tensor x = FunctionLoggingTensor::wrap(ones({2}), log);
    CHECK(detail::function_layer_in_use());
  }
  CHECK_FALSE(detail::function_layer_in_use());
  {
    Log log;
    LogMode mode(log);
    FunctionModeGuard guard(mode);
    CHECK(detail::function_layer_in_use());
  }
  CHECK_FALSE(detail::function_layer_in_use());
}

TEST_CASE("a subclass tensor made on one thread takes function calls on another" * doctest::test_suite("threads")) {
  auto log = std::make_shared<Log>();
  const Tensor x = FunctionLoggingTensor::wrap(ones({2}), log);
  std::thread worker([&] { relu(x); });
  worker.join();
  CHECK(*log == Log{"function torch.relu", "dispatch aten.relu.default"});
}

}  // namespace test_subclass_function
