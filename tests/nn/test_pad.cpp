// tests/nn/test_pad.cpp: F::pad in constant mode, as LibTorch spells it (PadFuncOptions), and what the
// modes see: a function mode the F.pad call, a dispatch mode the constant_pad_nd it runs (PyTorch's
// aten::pad is CompositeImplicitAutograd), then constant_pad_nd with the negated pads in backward.
// Expected values are PyTorch 1.13's: F.pad(arange(6.).view(2, 3), [1, 1, 0, 2], value=0.5).
#include <algorithm>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"
#include "nn/functional.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_pad {  // Note [Test files in unity builds]

using namespace strata;
namespace F = strata::nn::functional;

namespace {
struct NameLog final : FunctionMode {
  std::vector<std::string> names;
  std::string_view name() const override { return "NameLog"; }
  void torch_function(FunctionCall& call) override {
    names.emplace_back(call.name());
    call.call_through();
  }
};
}  // namespace

TEST_CASE("F::pad pads with the value, as constant_pad_nd; the modes see PyTorch's calls and backward") {
  Tensor x = view(arange(6, {.dtype = ScalarType::Float32}), {2, 3});
  requires_grad_(x);
  NameLog names;
  Tensor y;
  std::vector<std::string> ops = testing::ops_seen([&] {
    FunctionModeGuard guard(names);
    y = F::pad(x, F::PadFuncOptions({1, 1, 0, 2}).value(0.5));
  });
  CHECK(names.names == std::vector<std::string>{"torch.nn.functional.pad"});
  CHECK(ops == std::vector<std::string>{"aten.constant_pad_nd.default"});
  CHECK(testing::sizes_of(y) == std::vector<std::int64_t>{4, 5});
  CHECK(y.to_vector<float>() == std::vector<float>{0.5, 0, 1, 2, 0.5, 0.5, 3, 4, 5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                                                   0.5, 0.5, 0.5, 0.5, 0.5});
  CHECK(testing::max_abs_diff(y, constant_pad_nd(x, {1, 1, 0, 2}, 0.5).to_vector<double>()) == 0);
  const Tensor loss = sum(mul(y, y));
  const std::vector<std::string> backward_ops = testing::ops_seen([&] { backward(loss); });
  CHECK(std::count(backward_ops.begin(), backward_ops.end(), "aten.constant_pad_nd.default") == 1);
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});  // 2x, cropped back to x's part
  CHECK(testing::sizes_of(F::pad(x, F::PadFuncOptions({-1, 0}))) == std::vector<std::int64_t>{2, 2});
}

}  // namespace test_pad
