// tests/ops/test_fast_path.cpp: the unboxed fast path (Note [Unboxed fast path]) gives what the boxed
// dispatcher path gives: same values, same errors (named after the op). A do-nothing mode forces the
// boxed path; without it, plain CPU tensors take the fast path.
#include <doctest/doctest.h>

#include <functional>
#include <sstream>

#include "core/interpose/interposer.h"
#include "ops/functions.h"

namespace test_fast_path {  // Note [Test files in unity builds]

using namespace strata;

namespace {
struct PassThrough : DispatchMode {
  int seen = 0;
  std::string_view name() const override { return "PassThrough"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    ++seen;
    op.call(stack);
  }
};
}  // namespace

TEST_CASE("fast and boxed paths compute the same values") {
  manual_seed(3);
  const Tensor a = randn({5, 4}), b = randn({4}), m = randn({4, 3});
  const std::vector<std::pair<const char*, std::function<Tensor()>>> cases = {
      {"add", [&] { return add(a, b, 0.5); }},
      {"mul", [&] { return mul(a, b); }},
      {"addmm", [&] { return addmm(randn({3}), a, m); }},
      {"view", [&] { return view(a, {20}); }},
      {"t", [&] { return t(a); }},
      {"sum", [&] { return sum(a, {0}, true); }},
      {"_log_softmax", [&] { return _log_softmax(a, 1); }},
      {"clone", [&] { return clone(t(a)); }},
      {"add_", [&] { return add_(clone(a), b); }},
  };
  for (const auto& entry : cases) {
    const auto& fn = entry.second;
    INFO(entry.first);  // no structured binding: INFO's lambda captures it, which clang 14 refuses
    manual_seed(9);
    const Tensor fast = fn();
    PassThrough mode;
    Tensor boxed;
    {
      ModeGuard guard(mode);
      manual_seed(9);
      boxed = fn();
    }
    CHECK(mode.seen >= 1);
    CHECK(fast.sizes() == boxed.sizes());
    CHECK(fast.strides() == boxed.strides());
    CHECK(fast.to_vector<float>() == boxed.to_vector<float>());
  }
}

TEST_CASE("fast-path errors are named after the op, as boxed ones are") {
  const Tensor a = randn({2, 3});
  CHECK_THROWS_WITH_AS(mm(a, a), "[aten::mm] mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", Error);
  PassThrough mode;
  ModeGuard guard(mode);
  CHECK_THROWS_WITH_AS(mm(a, a), "[aten::mm] mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", Error);
}

TEST_CASE("the fast path is taken only when the CPU kernel is all that would run") {
  const Tensor a = randn({2});
  CHECK(Dispatcher::runs_cpu_only(a.key_set()));
  {
    PassThrough mode;
    ModeGuard guard(mode);
    CHECK_FALSE(Dispatcher::runs_cpu_only(a.key_set()));  // a mode includes the Python key
  }
  CHECK_FALSE(Dispatcher::runs_cpu_only(DispatchKeySet{DispatchKey::Autograd, DispatchKey::CPU}));
  CHECK_FALSE(Dispatcher::runs_cpu_only(DispatchKeySet(DispatchKey::Meta)));
  {
    ExcludeKeyGuard no_autograd(DispatchKey::Autograd);
    CHECK(Dispatcher::runs_cpu_only(DispatchKeySet{DispatchKey::Autograd, DispatchKey::CPU}));
  }
  {  // a transparent key only redispatches (grad mode off), so the fast path may skip it
    SetTransparentKeyGuard transparent(DispatchKey::Autograd, true);
    CHECK(Dispatcher::runs_cpu_only(DispatchKeySet{DispatchKey::Autograd, DispatchKey::CPU}));
    CHECK_FALSE(Dispatcher::runs_cpu_only(DispatchKeySet{DispatchKey::Python, DispatchKey::CPU}));
  }
  CHECK_FALSE(Dispatcher::runs_cpu_only(DispatchKeySet{DispatchKey::Autograd, DispatchKey::CPU}));  // restored
  std::ostringstream trace;
  {
    DispatchTraceGuard guard(trace);
    CHECK_FALSE(Dispatcher::runs_cpu_only(a.key_set()));  // tracing shows every step, so no shortcut
    neg(a);
  }
  CHECK(trace.str() == "aten.neg.default(f32[2]) [CPU] -> CPU: kernel neg\n");
}

}  // namespace test_fast_path
