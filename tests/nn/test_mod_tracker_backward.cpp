// tests/nn/test_mod_tracker_backward.cpp: ModTracker in the backward (Note [A module's backward]):
// the modules entered and left, in order, for the seed model and a nested one, against the order
// PyTorch 1.13's engine gives the same tracking (tests/golden/flop_modules_torch.json,
// scripts/reference/flop_modules_reference.py); is_bw; a forward that throws; nothing left behind.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/graph.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/autograd_meta.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/mod_tracker.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_mod_tracker_backward {  // Note [Test files in unity builds]

using namespace strata;

namespace {

const nlohmann::json& golden(const char* name) {
  static const nlohmann::json all = testing::read_golden_json("flop_modules_torch.json");
  return all.at(name);
}

// Python's repr of a sorted list of names: ['Global', 'Sequential'].
std::string repr(const std::set<std::string>& names) {
  std::string out = "[";
  for (const std::string& n : names) out += (out.size() > 1 ? ", '" : "'") + n + "'";
  return out + "]";
}

// Whether a gradient hook is registered on `t` (on its grad_fn, or on the leaf).
bool has_live_grad_hooks(const Tensor& t) {
  if (autograd::Node* fn = t.grad_fn()) {
    if (!fn->hooks()) return false;
    for (const auto& l : fn->hooks()->tensor_pre)
      if (!l.list->empty()) return true;
    return false;
  }
  const AutogradMeta* meta = t.impl()->autograd_meta();
  return meta && meta->hooks && meta->hooks->pre && !meta->hooks->pre->empty();
}

// The user hooks' log in the reference script's format, checking is_bw in each.
void log_backward(nn::ModTracker& tracker, std::vector<std::string>& log) {
  tracker.register_user_hooks(
      nullptr, nullptr,
      [&](const std::string& fqn, std::span<const Tensor> grads) {
        CHECK(nn::ModTracker::is_bw());
        CHECK(grads.size() == 1);  // the output's gradient
        log.push_back("> " + fqn + " " + repr(tracker.parents()));
      },
      [&](const std::string& fqn, std::span<const Tensor> grads) {
        CHECK(nn::ModTracker::is_bw());
        CHECK(grads.size() <= 1);  // the input's gradient, or none when left at the end of the pass
        log.push_back("< " + fqn + " " + repr(tracker.parents()));
      });
}

std::vector<std::string> golden_log(const char* name) {
  return golden(name)["backward_log"].get<std::vector<std::string>>();
}

class Throwing final : public nn::Module {
 public:
  Tensor forward(const Tensor&) override { throw Error("forward failed"); }

 protected:
  std::string type_name() const override { return "Throwing"; }
};

}  // namespace

TEST_CASE("ModTracker in backward: the seed model enters and leaves modules as PyTorch's engine does") {
  // The input needs no gradient: Sequential and Sequential.0 are left at the end of the pass.
  auto model = nn::make_mlp({16, 32, 4});
  nn::ModTracker tracker;
  std::vector<std::string> log;
  log_backward(tracker, log);
  tracker.enter();
  CHECK_FALSE(nn::ModTracker::is_bw());
  const Tensor loss = nn::functional::cross_entropy((*model)(randn({8, 16})), tensor<std::int64_t>({0, 1, 2, 3, 0, 1, 2, 3}, {8}));
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  backward(loss);
  CHECK(log == golden_log("seed"));
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  CHECK_FALSE(nn::ModTracker::is_bw());
  tracker.exit();
}

TEST_CASE("ModTracker in backward: a nested model whose input requires grad") {
  auto inner = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Linear>(6, 8), std::make_shared<nn::ReLU>()});
  auto model = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{inner, std::make_shared<nn::Linear>(8, 3)});
  nn::ModTracker tracker;
  std::vector<std::string> log;
  log_backward(tracker, log);
  tracker.enter();
  Tensor x = randn({5, 6});
  requires_grad_(x);
  const Tensor out = (*model)(x);
  backward(sum(out), Tensor(), true);
  CHECK(log == golden_log("nested"));
  log.clear();
  backward(sum(out));  // a second pass over the kept graph tracks the same way
  CHECK(log == golden_log("nested"));
  tracker.exit();
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
}

TEST_CASE("ModTracker: a module whose forward throws leaves the tracker and every hook as they were") {
  nn::ModTracker tracker;
  std::vector<std::string> log;
  log_backward(tracker, log);
  tracker.enter();
  const bool module_hooks_before = nn::detail::module_hooks_registered();
  auto failing = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{std::make_shared<Throwing>()});
  Tensor w = randn({5, 6});
  requires_grad_(w);
  SUBCASE("an input that requires grad: the hooks on it are taken back") {
    const Tensor x = mul(w, 2);
    CHECK_THROWS_WITH_AS((*failing)(x), "forward failed", Error);
    CHECK_THROWS_WITH_AS((*failing)(w), "forward failed", Error);
    CHECK_FALSE(has_live_grad_hooks(x));
    CHECK_FALSE(has_live_grad_hooks(w));
    backward(sum(x));
    CHECK(log.empty());
  }
  SUBCASE("an input without grad: the leavings queued for the backward are taken back") {
    CHECK_THROWS_WITH_AS((*failing)(ones_like(empty({5, 6}))), "forward failed", Error);
    auto linear = std::make_shared<nn::Linear>(6, 2);
    backward(sum((*linear)(w)));  // only the Linear is entered and left
    CHECK(log == std::vector<std::string>{"> Linear ['Global', 'Linear']", "< Linear ['Global', 'Linear']"});
  }
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  CHECK(nn::detail::module_hooks_registered() == module_hooks_before);
  tracker.exit();
  CHECK_FALSE(nn::detail::module_hooks_registered());
}

TEST_CASE("ModTracker: exit() removes every gradient hook it registered; a kept graph runs untracked") {
  auto model = nn::make_mlp({4, 3, 2});
  nn::ModTracker tracker;
  std::vector<std::string> log;
  log_backward(tracker, log);
  Tensor x = randn({2, 4});
  requires_grad_(x);
  Tensor out;
  {
    tracker.enter();
    out = (*model)(x);
    CHECK(has_live_grad_hooks(out));
    CHECK(has_live_grad_hooks(x));
    tracker.exit();
  }
  CHECK_FALSE(nn::detail::module_hooks_registered());
  CHECK_FALSE(has_live_grad_hooks(out));
  CHECK_FALSE(has_live_grad_hooks(x));
  backward(sum(out));
  CHECK(log.empty());
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
}

TEST_CASE("ModTracker: a backward that fails drops its callbacks; the next pass still ends with Global") {
  auto model = nn::make_mlp({4, 3, 2});
  nn::ModTracker tracker;
  tracker.enter();
  Tensor out = (*model)(randn({2, 4}));
  auto bad = register_hook(out, [](const Tensor&) -> Tensor { throw Error("hook failed"); });
  CHECK_THROWS_WITH_AS(backward(sum(out), Tensor(), true), "hook failed", Error);
  bad.remove();
  std::set<std::string> inside;
  register_hook(out, [&](const Tensor&) {
    inside = tracker.parents();
    return Tensor();
  });
  backward(sum(out));
  CHECK(inside == std::set<std::string>{"Global", "Sequential", "Sequential.2"});
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  tracker.exit();
}

}  // namespace test_mod_tracker_backward
