// tests/nn/test_sgd.cpp: SGD's update rules against three steps of PyTorch's torch.optim.SGD for each
// option (momentum, dampening, nesterov, weight_decay, maximize), its errors, and what step() dispatches.
#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interposer.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/test_helpers.h"

using namespace strata;
using testing::OpLog;

namespace {
Tensor matrix(const nlohmann::json& rows) {
  std::vector<float> v;
  for (const auto& row : rows)
    for (double x : row) v.push_back(static_cast<float>(x));
  return tensor<float>(v, {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())});
}

}  // namespace

TEST_CASE("SGD updates equal PyTorch's for every option") {
  const nlohmann::json ref = testing::read_golden_json("sgd_cases.json");
  for (const auto& c : ref["cases"]) {
    const nlohmann::json& o = c["options"];
    INFO(o.dump());
    const optim::SGDOptions options{.lr = o.value("lr", 0.0), .momentum = o.value("momentum", 0.0),
                                    .dampening = o.value("dampening", 0.0), .weight_decay = o.value("weight_decay", 0.0),
                                    .nesterov = o.value("nesterov", false), .maximize = o.value("maximize", false)};
    const Tensor p = matrix(ref["p0"]);
    requires_grad_(p);
    optim::SGD opt({p}, options);
    for (std::size_t step = 0; step < ref["weights"].size(); ++step) {
      opt.zero_grad();
      backward(sum(mul(p, matrix(ref["weights"][step]))));
      opt.step();
      CHECK(testing::max_abs_diff(p, testing::json_doubles(c["steps"][step])) <= 1e-6);
    }
  }
}

TEST_CASE("SGD rejects invalid options with PyTorch's messages") {
  const Tensor p = randn({2});
  requires_grad_(p);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = -0.1}), "Invalid learning rate: -0.1", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = 0.1, .momentum = -1}), "Invalid momentum value: -1", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = 0.1, .weight_decay = -1}), "Invalid weight_decay value: -1", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = 0.1, .nesterov = true}), "Nesterov momentum requires a momentum and zero dampening", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({}, {.lr = 0.1}), "optimizer got an empty parameter list", Error);
}

TEST_CASE("step() runs inside a record-function scope and dispatches PyTorch's single-tensor updates") {
  const Tensor p = randn({3});
  requires_grad_(p);
  optim::SGD plain({p}, {.lr = 0.1});
  backward(sum(p));
  OpLog log;
  {
    ModeGuard mode(log);
    plain.step();
  }
  CHECK(log.ops == std::vector<std::string>{"profiler._record_function_enter_new.default", "aten.add_.Tensor",
                                            "profiler._record_function_exit._RecordFunction"});
  optim::SGD momentum({p}, {.lr = 0.1, .momentum = 0.9});
  OpLog first, second;
  {
    ModeGuard mode(first);
    momentum.step();
  }
  {
    ModeGuard mode(second);
    momentum.step();
  }
  CHECK(first.ops == std::vector<std::string>{"profiler._record_function_enter_new.default", "aten.clone.default",
                                              "aten.detach.default", "aten.detach.default", "aten.add_.Tensor",
                                              "profiler._record_function_exit._RecordFunction"});
  CHECK(second.ops == std::vector<std::string>{"profiler._record_function_enter_new.default", "aten.mul_.Tensor",
                                               "aten.add_.Tensor", "aten.add_.Tensor",
                                               "profiler._record_function_exit._RecordFunction"});
  CHECK(momentum.momentum_buffer(0).defined());
}
