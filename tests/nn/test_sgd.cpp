// tests/nn/test_sgd.cpp: SGD's update rules against three steps of PyTorch's torch.optim.SGD for each
// option (momentum, dampening, nesterov, weight_decay, maximize), its errors, and what step() dispatches.
#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/test_helpers.h"

namespace test_sgd {  // Note [Test files in unity builds]

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
  // Python's repr of the value, not a stream's six significant digits.
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = -0.123456789}), "Invalid learning rate: -0.123456789", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, {.lr = -1e20}), "Invalid learning rate: -1e+20", Error);
  CHECK_THROWS_WITH_AS(optim::SGD({mul(p, p)}, {.lr = 0.1}), "can't optimize a non-leaf Tensor", Error);
  // PyTorch's checks are `lr < 0.0` and so on, which NaN passes.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_NOTHROW(optim::SGD({p}, {.lr = nan, .momentum = nan, .weight_decay = nan, .nesterov = true}));
}

TEST_CASE("a parameter listed twice shares one momentum buffer, as PyTorch's state[p] does") {
  const Tensor p = requires_grad_(tensor<float>({1, 2}));
  optim::SGD opt({p, p}, {.lr = 0.1, .momentum = 0.9});
  // torch.optim.SGD([p, p], lr=0.1, momentum=0.9), three steps of (p * p).sum():
  const std::vector<std::vector<double>> params{{0.6000000238418579, 1.2000000476837158},
                                                {-0.0899999812245369, -0.1799999624490738},
                                                {-0.7046999335289001, -1.4093998670578003}};
  const std::vector<std::vector<double>> bufs{{2.0, 4.0}, {3.8999998569488525, 7.799999713897705},
                                              {2.816999673843384, 5.633999347686768}};
  for (std::size_t step = 0; step < 3; ++step) {
    opt.zero_grad();
    backward(sum(mul(p, p)));
    opt.step();
    CHECK(testing::max_abs_diff(p, params[step]) <= 1e-6);
    CHECK(opt.momentum_buffer(1).is_same(opt.momentum_buffer(0)));
    CHECK(testing::max_abs_diff(opt.momentum_buffer(0), bufs[step]) <= 1e-6);
  }
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

}  // namespace test_sgd
