// tests/ops/test_einsum.cpp: torch.einsum against PyTorch (tests/golden/einsum_torch.json, from
// scripts/reference/einsum_reference.py): the ops a dispatch mode sees forward and backward (Note
// [einsum runs ATen's decomposition], ops/einsum.cpp), the output's sizes, strides and values, the
// gradients and every error message; then gradcheck through the decomposition, what a function mode
// and DebugMode see, the seed's example line for line, and a wrapper subclass meeting each op.
#include <algorithm>
#include <memory>

#include "autograd/backward.h"
#include "autograd/gradcheck.h"
#include "autograd/variable.h"
#include "core/interpose/function_mode.h"
#include "modes/debug_mode.h"
#include "modes/logging_tensor.h"
#include "ops/einsum.h"
#include "ops/functions.h"
#include "tests/golden_products.h"
#include "tests/test_helpers.h"

namespace test_einsum {  // Note [Test files in unity builds]

using namespace strata;
using strata::tracer::DebugMode;
using strata::tracer::LoggingTensor;
using nlohmann::json;

namespace {

// The script's operand k: values ((3 * i + k) % 7 - 3) / 2, float32.
Tensor operand(const std::vector<std::int64_t>& shape, std::int64_t k, bool grad) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(static_cast<float>((3 * i + k) % 7 - 3) / 2);
  Tensor t = view(tensor<float>(values), shape);
  if (grad) requires_grad_(t);
  return t;
}


// Records the announced calls' names, and the equation each einsum was given.
class Calls final : public FunctionMode {
 public:
  std::string_view name() const override { return "Calls"; }
  void torch_function(FunctionCall& call) override {
    std::string line(call.name());
    for (const IValue& a : call.args())
      line += a.is_tensor() ? " T" : " " + std::string(a.to_string_view());
    seen.push_back(line);
    call.call_through();
  }
  std::vector<std::string> seen;
};

}  // namespace

TEST_CASE("einsum dispatches PyTorch's ops and gives its outputs and gradients") {
  const json golden = testing::read_golden_json("einsum_torch.json")["cases"];
  REQUIRE(golden.size() == 25);
  for (const auto& entry : golden.items()) {
    const json& c = entry.value();
    INFO(entry.key() << ": " << c["equation"].get<std::string>());
    std::vector<Tensor> xs;
    for (const json& spec : c["operands"])
      xs.push_back(operand(spec["shape"].get<std::vector<std::int64_t>>(), static_cast<std::int64_t>(xs.size()),
                           spec["grad"].get<bool>()));
    const std::string equation = c["equation"];
    testing::check_golden_product(c, xs, [&] { return einsum(equation, xs); });
  }
}

TEST_CASE("einsum refuses bad equations and operands in PyTorch's words") {
  const json golden = testing::read_golden_json("einsum_torch.json")["errors"];
  REQUIRE(golden.size() == 17);
  for (const auto& entry : golden.items()) {
    const json& e = entry.value();
    INFO(entry.key());
    std::vector<Tensor> xs;
    for (const json& shape : e["shapes"])
      xs.push_back(operand(shape.get<std::vector<std::int64_t>>(), static_cast<std::int64_t>(xs.size()), false));
    const std::string equation = e["equation"];
    const std::string expected = "[aten::einsum] " + e["message"].get<std::string>();
    CHECK_THROWS_WITH_AS((void)einsum(equation, xs), expected.c_str(), Error);
  }
  CHECK_THROWS_WITH_AS((void)einsum("ij,jk", {randn({2, 3}), Tensor()}),
                       doctest::Contains("[aten::einsum] Expected a proper Tensor but got None"), Error);
}

TEST_CASE("einsum's gradients flow through its decomposition: gradcheck and gradgradcheck in float64") {
  const std::vector<std::pair<std::string, std::vector<std::vector<std::int64_t>>>> cases = {
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}}, {"i,j->ij", {{3}, {2}}},       {"ii->i", {{3, 3}}},
      {"ii", {{3, 3}}},                          {"...ij,...jk", {{2, 2, 3}, {3, 2}}},
      {"bn,anm,bm->ba", {{2, 3}, {2, 3, 2}, {2, 2}}},                          {"iij,j->i", {{2, 2, 3}, {3}}},
  };
  for (const auto& entry : cases) {
    INFO(entry.first);
    std::vector<Tensor> inputs;
    for (const auto& shape : entry.second) inputs.push_back(requires_grad_(randn(shape, {.dtype = ScalarType::Float64})));
    const std::string equation = entry.first;
    const auto fn = [equation](const std::vector<Tensor>& xs) { return einsum(equation, xs); };
    const autograd::GradcheckResult first = autograd::gradcheck(fn, inputs);
    CHECK_MESSAGE(first.ok, first.message);
    const autograd::GradcheckResult second = autograd::gradgradcheck(fn, inputs);
    CHECK_MESSAGE(second.ok, second.message);
  }
}

TEST_CASE("a function mode sees torch.functional.einsum with the operands spread, and nothing inside it") {
  Calls calls;
  const Tensor a = randn({2, 3}), b = randn({3, 4});
  {
    FunctionModeGuard guard(calls);
    (void)einsum("ij,jk->ik", {a, b});
  }
  CHECK(calls.seen == std::vector<std::string>{"torch.functional.einsum ij,jk->ik T T"});
}

TEST_CASE("DebugMode logs the seed's einsum as the seed prints its local ops") {
  // ../dtensor_debug_mode_pr.txt's torch.einsum("bld,dnh->blnh", ...), on plain tensors: the lines
  // its DTensors' local tensors show.
  DebugMode mode({.record_torchfunction = true, .record_output = false});
  const Tensor a = randn({16, 6, 8}), b = randn({8, 4, 4});
  {
    DebugMode::Guard guard(mode);
    (void)einsum("bld,dnh->blnh", {a, b});
  }
  CHECK(mode.debug_string() ==
        "  torch.functional.einsum(bld,dnh->blnh, t: f32[16, 6, 8], t: f32[8, 4, 4])\n"
        "      aten::unsqueeze(t: f32[16, 6, 8], 3)\n"
        "      aten::unsqueeze(t: f32[16, 6, 8, 1], 4)\n"
        "      aten::permute(t: f32[16, 6, 8, 1, 1], [0, 1, 3, 4, 2])\n"
        "      aten::unsqueeze(t: f32[8, 4, 4], 3)\n"
        "      aten::unsqueeze(t: f32[8, 4, 4, 1], 4)\n"
        "      aten::permute(t: f32[8, 4, 4, 1, 1], [3, 4, 1, 2, 0])\n"
        "      aten::permute(t: f32[16, 6, 1, 1, 8], [0, 1, 4, 2, 3])\n"
        "      aten::view(t: f32[16, 6, 8, 1, 1], [1, 96, 8])\n"
        "      aten::permute(t: f32[1, 1, 4, 4, 8], [4, 2, 3, 0, 1])\n"
        "      aten::view(t: f32[8, 4, 4, 1, 1], [1, 8, 16])\n"
        "      aten::bmm(t: f32[1, 96, 8], t: f32[1, 8, 16])\n"
        "      aten::view(t: f32[1, 96, 16], [16, 6, 1, 4, 4])\n"
        "      aten::permute(t: f32[16, 6, 1, 4, 4], [0, 1, 3, 4, 2])\n"
        "      aten::view(t: f32[16, 6, 4, 4, 1], [16, 6, 4, 4])");
}

TEST_CASE("a wrapper subclass sees each op of einsum, forward and backward, and its gradients are wrappers") {
  // What a sharded tensor will meet: every op of the decomposition reaches its handler one by one.
  const Tensor a = randn({2, 3, 4}), b = randn({4, 3});
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor wa = LoggingTensor::wrap(a, log, true), wb = LoggingTensor::wrap(b, log, true);
  std::vector<std::string> plain_ops;
  Tensor plain;
  plain_ops = testing::ops_seen([&] { plain = einsum("bij,jk->bik", {a, b}); });
  const Tensor wrapped = einsum("bij,jk->bik", {wa, wb});
  CHECK(*log == plain_ops);
  REQUIRE(LoggingTensor::of(wrapped) != nullptr);
  CHECK(testing::sizes_of(wrapped) == testing::sizes_of(plain));
  CHECK(allclose(LoggingTensor::of(wrapped)->elem(), plain));
  log->clear();
  backward(sum(wrapped));
  CHECK(std::count(log->begin(), log->end(), "aten.bmm.default") == 2);
  REQUIRE(wa.grad().defined());
  CHECK(LoggingTensor::of(wa.grad()) != nullptr);
  CHECK(testing::sizes_of(wb.grad()) == std::vector<std::int64_t>{4, 3});
}

}  // namespace test_einsum
