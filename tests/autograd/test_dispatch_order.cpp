// tests/autograd/test_dispatch_order.cpp: the ops each derivative formula's backward and each
// composite's forward dispatch, in order, equal strata's own recorded sequences
// (tests/golden/dispatch_order_strata.json): Note [An op's operands are dispatched in a written
// order] makes them the same for every compiler, so a clang build must match this gcc-built golden.
// Unlike the *_torch.json goldens these come from strata, not PyTorch: they pin every formula's
// order, where those pin PyTorch's on a few. Regenerate from a gcc build, after checking each change:
//   STRATA_WRITE_DISPATCH_ORDER=tests/golden/dispatch_order_strata.json build/tests/test_autograd -tc='*strata*'
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/variable.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/ops/op_records.h"
#include "tests/test_helpers.h"

namespace test_dispatch_order {  // Note [Test files in unity builds]

using namespace strata;
namespace F = strata::nn::functional;

namespace {

using Inputs = std::vector<Tensor>;
using Phases = std::map<std::string, std::vector<std::string>>;

std::vector<std::string> logged(const std::function<void()>& fn) {
  testing::OpLog log;
  {
    ModeGuard mode(log);
    fn();
  }
  return log.ops;
}

// forward(inputs), then backward(sum(output)), then the gradients with create_graph (which runs the
// formulas under grad mode: native_dropout's is another function then; autograd::grad, so no .grad
// holds a graph that holds the .grad), each under its own mode.
Phases forward_backward(const Inputs& inputs, const std::function<Tensor(const Inputs&)>& forward) {
  Phases out;
  Tensor y;
  out["forward"] = logged([&] { y = forward(inputs); });
  if (!y.requires_grad()) return out;
  const Tensor loss = sum(y);
  out["backward"] = logged([&] { backward(loss, Tensor(), true); });
  Inputs wrt;
  for (const Tensor& t : inputs)
    if (t.requires_grad()) wrt.push_back(t);
  out["grad_create_graph"] = logged([&] { autograd::grad({loss}, wrt, {}, true, true, true); });
  return out;
}

Tensor leaf(std::initializer_list<std::int64_t> sizes) {
  Tensor t = randn(sizes);
  requires_grad_(t);
  return t;
}

// The composites: nn::functional, the ops that decompose into others, Tensor's operators, a module
// and an optimizer step. Each name is the function and what varies.
std::vector<std::pair<std::string, std::function<Phases()>>> composite_cases() {
  using Fn = std::function<Tensor(const Inputs&)>;
  const auto fb = [](std::function<Inputs()> inputs, Fn fn) { return [=] { return forward_backward(inputs(), fn); }; };
  const Tensor target = tensor<std::int64_t>({0, 2, 1, 2});
  const Tensor class_weight = tensor<float>({0.2f, 1, 3});  // made here: inside a case a mode would log its lift_fresh
  return {
      {"F::linear", fb([] { return Inputs{leaf({4, 3}), leaf({2, 3}), leaf({2})}; },
                       [](const Inputs& x) { return F::linear(x[0], x[1], x[2]); })},
      {"F::linear no bias, 3-d input", fb([] { return Inputs{leaf({2, 4, 3}), leaf({2, 3})}; },
                                          [](const Inputs& x) { return F::linear(x[0], x[1]); })},
      {"F::linear 3-d input with bias", fb([] { return Inputs{leaf({2, 4, 3}), leaf({2, 3}), leaf({2})}; },
                                           [](const Inputs& x) { return F::linear(x[0], x[1], x[2]); })},
      {"F::matmul 1-d by 2-d", fb([] { return Inputs{leaf({3}), leaf({3, 2})}; }, [](const Inputs& x) { return F::matmul(x[0], x[1]); })},
      {"F::matmul 3-d by 2-d", fb([] { return Inputs{leaf({2, 4, 3}), leaf({3, 2})}; },
                                  [](const Inputs& x) { return F::matmul(x[0], x[1]); })},
      {"F::matmul batched, broadcast", fb([] { return Inputs{leaf({2, 1, 3, 4}), leaf({3, 4, 2})}; },
                                          [](const Inputs& x) { return F::matmul(x[0], x[1]); })},
      {"F::matmul 2-d by 3-d", fb([] { return Inputs{leaf({3, 4}), leaf({2, 4, 5})}; },
                                  [](const Inputs& x) { return F::matmul(x[0], x[1]); })},
      {"flatten of a transpose", fb([] { return Inputs{leaf({2, 3})}; }, [](const Inputs& x) { return flatten(t(x[0])); })},
      {"F::relu", fb([] { return Inputs{leaf({5})}; }, [](const Inputs& x) { return F::relu(x[0]); })},
      {"F::log_softmax", fb([] { return Inputs{leaf({2, 3})}; }, [](const Inputs& x) { return F::log_softmax(x[0], 1); })},
      {"F::log_softmax dtype", fb([] { return Inputs{leaf({2, 3})}; },
                                  [](const Inputs& x) { return F::log_softmax(x[0], 0, ScalarType::Float64); })},
      {"F::softmax dtype", fb([] { return Inputs{leaf({2, 3})}; },
                              [](const Inputs& x) { return F::softmax(x[0], -1, ScalarType::Float64); })},
      {"F::gelu tanh", fb([] { return Inputs{leaf({5})}; }, [](const Inputs& x) { return F::gelu(x[0], "tanh"); })},
      {"F::sigmoid", fb([] { return Inputs{leaf({5})}; }, [](const Inputs& x) { return F::sigmoid(x[0]); })},
      {"F::tanh", fb([] { return Inputs{leaf({5})}; }, [](const Inputs& x) { return F::tanh(x[0]); })},
      {"F::dropout train", fb([] { return Inputs{leaf({4, 5})}; }, [](const Inputs& x) { return F::dropout(x[0], 0.3, true); })},
      {"F::dropout eval", fb([] { return Inputs{leaf({4, 5})}; }, [](const Inputs& x) { return F::dropout(x[0], 0.3, false); })},
      {"F::embedding padding_idx", fb([] { return Inputs{leaf({5, 3})}; },
                                      [indices = tensor<std::int64_t>({1, 4, 1, 0})](const Inputs& x) {
                                        return F::embedding(indices, x[0], 1);
                                      })},
      {"F::nll_loss", fb([] { return Inputs{leaf({4, 3})}; }, [target](const Inputs& x) { return F::nll_loss(x[0], target); })},
      {"F::nll_loss weight, sum, ignore_index", fb([] { return Inputs{leaf({4, 3})}; },
                                                   [target, class_weight](const Inputs& x) {
                                                     return F::nll_loss(x[0], target,
                                                                        {.weight = class_weight,
                                                                         .reduction = F::Reduction::Sum,
                                                                         .ignore_index = 1});
                                                   })},
      {"F::cross_entropy", fb([] { return Inputs{leaf({4, 3})}; }, [target](const Inputs& x) { return F::cross_entropy(x[0], target); })},
      {"F::cross_entropy 1-d, none", fb([] { return Inputs{leaf({3})}; },
                                        [](const Inputs& x) {
                                          return F::cross_entropy(x[0], scalar_tensor(2, ScalarType::Int64),
                                                                  {.reduction = F::Reduction::None});
                                        })},
      {"reshape of a transpose", fb([] { return Inputs{leaf({2, 3})}; }, [](const Inputs& x) { return reshape(t(x[0]), {6}); })},
      {"contiguous", fb([] { return Inputs{leaf({2, 3})}; }, [](const Inputs& x) { return contiguous(t(x[0])); })},
      {"narrow", fb([] { return Inputs{leaf({5, 2})}; }, [](const Inputs& x) { return narrow(x[0], 0, 1, 3); })},
      {"sum_to", fb([] { return Inputs{leaf({2, 3, 4})}; }, [](const Inputs& x) { return sum_to(x[0], {3, 1}); })},
      {"to float64", fb([] { return Inputs{leaf({3})}; }, [](const Inputs& x) { return to(x[0], ScalarType::Float64); })},
      {"softmax", fb([] { return Inputs{leaf({2, 3})}; }, [](const Inputs& x) { return softmax(x[0], 1); })},
      {"stack", fb([] { return Inputs{leaf({3}), leaf({3})}; }, [](const Inputs& x) { return stack({x[0], x[1]}, 1); })},
      // One operator with ops on both sides per statement: the test's own order is written out too.
      {"operators with numbers", fb([] { return Inputs{leaf({3})}; },
                                    [](const Inputs& x) {
                                      const Tensor left = (2.0 - x[0]) / 3.0;
                                      const Tensor right = 4.0 / (x[0] * 2.0 + 1.0);
                                      return left + right - x[0];
                                    })},
      {"operators with tensors", fb([] { return Inputs{leaf({3}), leaf({3})}; },
                                    [](const Inputs& x) {
                                      const Tensor negated = -(x[0] + x[1]);
                                      return negated * (x[0] - x[1]) / x[1];
                                    })},
      {"Linear, ReLU, Linear and an SGD step", [] {
         nn::Linear first(3, 4);
         nn::Linear second(4, 2);
         const Tensor input = randn({5, 3});
         std::vector<Tensor> params = first.parameters();
         for (const Tensor& p : second.parameters()) params.push_back(p);
         optim::SGD sgd(params, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01, .nesterov = false});
         const Tensor labels = tensor<std::int64_t>({0, 1, 1, 0, 1});
         Phases out;
         Tensor loss;
         out["forward"] = logged([&] { loss = F::cross_entropy(second(F::relu(first(input))), labels); });
         out["backward"] = logged([&] { backward(loss); });
         out["step"] = logged([&] { sgd.step(); });
         out["step again"] = logged([&] { sgd.step(); });
         return out;
       }},
  };
}

// Every case: each differentiable op's record (its first float64 sample that gradchecks, named after
// the op), then the composites.
std::map<std::string, Phases> record_all() {
  std::map<std::string, Phases> all;
  for (const testing::OpRecord& r : testing::op_records()) {
    if (!testing::differentiable(r)) continue;
    // The first float64 sample that gradchecks: the op, its backward, and its backward with create_graph.
    const auto sample = std::find_if(r.samples.begin(), r.samples.end(), [](const testing::RecordSample& s) {
      return s.grad && std::find(s.dtypes.begin(), s.dtypes.end(), "float64") != s.dtypes.end();
    });
    if (sample == r.samples.end()) continue;
    const testing::BuiltCall built = testing::build_call(r, sample->args, ScalarType::Float64, Device::CPU);
    for (std::size_t i = 0; i < built.tensors.size(); ++i)
      if (testing::is_floating(built.tensors[i]) && !built.nograd[i]) requires_grad_(built.tensors[i]);
    manual_seed(3);
    all[r.op] = forward_backward(built.tensors, [&](const Inputs& xs) {
      manual_seed(0);
      for (const Tensor& out : testing::call(r, testing::substituted(built.stack, xs)))
        if (testing::is_floating(out)) return out;
      return Tensor();
    });
  }
  for (const auto& entry : composite_cases()) {
    manual_seed(3);
    REQUIRE_MESSAGE(all.count(entry.first) == 0, "two cases named ", entry.first);
    all[entry.first] = entry.second();
  }
  return all;
}

}  // namespace

TEST_CASE("every formula and composite dispatches strata's recorded sequence, for any compiler") {
  const std::map<std::string, Phases> got = record_all();
  if (const char* path = std::getenv("STRATA_WRITE_DISPATCH_ORDER")) {
    std::ofstream(path) << nlohmann::json{{"cases", got}}.dump(1) << "\n";
    MESSAGE("wrote " << std::string(path));
  }
  const nlohmann::json golden = testing::read_golden_json("dispatch_order_strata.json")["cases"];
  CHECK(golden.size() == got.size());
  for (const auto& entry : got) {
    INFO(entry.first);  // not a structured binding: INFO captures it (clang 14)
    REQUIRE(golden.contains(entry.first));
    const nlohmann::json& expected = golden[entry.first];
    CHECK(expected.size() == entry.second.size());
    for (const auto& phase : entry.second) {
      INFO(phase.first);
      REQUIRE(expected.contains(phase.first));
      const std::vector<std::string> want = expected[phase.first].get<std::vector<std::string>>();
      CHECK_MESSAGE(phase.second == want, "got:    " << nlohmann::json(phase.second).dump() << "\ngolden: " << nlohmann::json(want).dump());
    }
  }
}

}  // namespace test_dispatch_order
