// tests/nn/test_edge_cases.cpp: nn's edge cases against PyTorch 2.8 (values and messages copied from
// real runs): shared modules, zero_grad after create_graph, init's gains and modes, linear's ranks and
// empty shapes, and the target checks of nll_loss and cross_entropy. SGD's own cases are in test_sgd.cpp.
#include "autograd/backward.h"
#include "autograd/variable.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/test_helpers.h"

namespace test_edge_cases {  // Note [Test files in unity builds]

using namespace strata;
using testing::max_abs_diff;
namespace F = strata::nn::functional;

TEST_CASE("a module reached twice lists its parameters once, under the first name") {
  auto lin = std::make_shared<nn::Linear>(2, 2);
  nn::Sequential twice({lin, lin});
  const auto named = twice.named_parameters();
  REQUIRE(named.size() == 2);  // PyTorch: ['0.weight', '0.bias']
  CHECK(named[0].first == "0.weight");
  CHECK(named[1].first == "0.bias");
  CHECK(twice.parameters().size() == 2);
}

TEST_CASE("zero_grad(set_to_none=false) detaches a gradient made with create_graph before zeroing it") {
  // PyTorch: p.grad.detach_() then zero_(): the same tensor, no grad_fn, requires_grad False.
  auto check_detached = [](const Tensor& p, const Tensor& before) {
    CHECK(p.grad().is_same(before));
    CHECK(p.grad().grad_fn() == nullptr);
    CHECK_FALSE(p.grad().requires_grad());
    CHECK(max_abs_diff(p.grad(), std::vector<double>(static_cast<std::size_t>(p.numel()), 0.0)) == 0);
  };
  nn::Linear lin(2, 1);
  const Tensor y = sum(lin(ones_like(randn({1, 2}))));
  backward(mul(y, y), Tensor(), std::nullopt, /*create_graph=*/true);
  const Tensor g = lin.weight().grad();
  REQUIRE(g.grad_fn() != nullptr);
  lin.zero_grad(false);
  check_detached(lin.weight(), g);

  const Tensor p = requires_grad_(tensor<float>({1, 2}));
  optim::SGD opt({p}, {.lr = 0.1});
  backward(sum(mul(p, p)), Tensor(), std::nullopt, /*create_graph=*/true);
  const Tensor pg = p.grad();
  REQUIRE(pg.grad_fn() != nullptr);
  opt.zero_grad(false);
  check_detached(p, pg);
}

TEST_CASE("init's gains and fan modes are torch.nn.init's") {
  CHECK(nn::init::calculate_gain("selu") == 0.75);
  CHECK(nn::init::calculate_gain("conv_transpose2d") == 1.0);
  CHECK_THROWS_WITH_AS(nn::init::calculate_gain("convfoo"), "Unsupported nonlinearity convfoo", Error);
  const Tensor w = empty({2, 3});
  CHECK_THROWS_WITH_AS(nn::init::kaiming_uniform_(w, 0, "Fan_Avg"),
                       "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']", Error);
  manual_seed(0);
  nn::init::kaiming_uniform_(w, 0, "FAN_IN");  // lowercased first, as _calculate_correct_fan does
  for (float v : w.to_vector<float>()) CHECK(std::abs(v) <= std::sqrt(6.0f / 3));
  CHECK_THROWS_WITH_AS(nn::Linear(-1, 3), "[aten::empty] Trying to create tensor with negative dimension -1: [3, -1]", Error);
}

TEST_CASE("linear takes PyTorch 2.8's path for each rank and shape") {
  const Tensor w = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_WITH_AS(F::linear(scalar_tensor(1.0, ScalarType::Float32), w, tensor<float>({1, 2})),
                       "both arguments to linear need to be at least 1D, but they are 0D and 2D", Error);
  CHECK_THROWS_WITH_AS(F::linear(randn({2, 3}), scalar_tensor(1.0, ScalarType::Float32)),
                       "both arguments to linear need to be at least 1D, but they are 2D and 0D", Error);
  // A contiguous 3-D input is flattened whatever the bias's rank: the bias broadcasts against [6, 2].
  std::vector<float> xs(18), bs(12);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<float>(i);
  const Tensor x = tensor<float>(xs, {2, 3, 3});
  const Tensor y = F::linear(x, w, tensor<float>(bs, {6, 2}));
  CHECK(testing::sizes_of(y) == std::vector<std::int64_t>{2, 3, 2});
  CHECK(max_abs_diff(y, {8, 18, 28, 65, 48, 112, 68, 159, 88, 206, 108, 253}) == 0);
  CHECK_THROWS_WITH_AS(F::linear(x, w, ones_like(randn({3, 2}))),
                       "[aten::addmm] The expanded size of the tensor (6) must match the existing size (3) at "
                       "non-singleton dimension 0.  Target sizes: [6, 2].  Tensor sizes: [3, 2]",
                       Error);
  // A last dimension of 0 folds into [6, 0] (not [-1, 0]): the product is all zeros.
  const Tensor empty_k = F::linear(empty({2, 3, 0}), empty({5, 0}));
  CHECK(testing::sizes_of(empty_k) == std::vector<std::int64_t>{2, 3, 5});
  CHECK(max_abs_diff(empty_k, std::vector<double>(30, 0.0)) == 0);
}

TEST_CASE("nll_loss and cross_entropy check targets as PyTorch does") {
  const Tensor logits = randn({2, 3});
  // nll_loss_nd reads a 0-d target's batch size as 0.
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, scalar_tensor(1, ScalarType::Int64)),
                       "Expected input batch_size (2) to match target batch_size (0).", Error);
  // A target shaped like the input holds class probabilities, and must be floating.
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, zeros_like(logits, {.dtype = ScalarType::Int64})),
                       "Expected floating point type for target with class probabilities, got int64", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(scalar_tensor(1.0, ScalarType::Float32), scalar_tensor(0, ScalarType::Int64)),
                       "Expected floating point type for target with class probabilities, got int64", Error);
  // Any other target is class indices: a float one fails nll_loss's dtype check, not a probabilities one.
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, tensor<float>({0, 1})),
                       "[aten::nll_loss_forward] expected scalar type int64 but found float32", Error);
}

TEST_CASE("composites refuse an undefined tensor with the dispatcher's message instead of crashing") {
  const Tensor x = randn({2, 3}), target = tensor<std::int64_t>({0, 1});
  const char* none = "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #";
  auto message = [&](const char* op, int position, const char* name) {
    return std::string("[") + op + "] " + none + std::to_string(position) + " '" + name + "'";
  };
  CHECK_THROWS_WITH_AS(F::linear(Tensor(), x), message("aten::linear", 0, "input").c_str(), Error);
  CHECK_THROWS_WITH_AS(F::linear(x, Tensor()), message("aten::linear", 1, "weight").c_str(), Error);
  CHECK_THROWS_WITH_AS(F::matmul(x, Tensor()), message("aten::matmul", 1, "other").c_str(), Error);
  CHECK_THROWS_WITH_AS(F::log_softmax(Tensor(), 0, ScalarType::Float64), message("aten::log_softmax", 0, "self").c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(F::nll_loss(x, Tensor()), message("aten::nll_loss_nd", 1, "target").c_str(), Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(Tensor(), target), message("aten::cross_entropy_loss", 0, "self").c_str(), Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, Tensor()), message("aten::cross_entropy_loss", 1, "target").c_str(), Error);
  CHECK_THROWS_WITH_AS(nn::init::kaiming_uniform_(Tensor()),
                       "kaiming_uniform_: expected a defined tensor, got an undefined Tensor", Error);
  CHECK_THROWS_WITH_AS(nn::init::calculate_fan_in_and_fan_out(Tensor()),
                       "calculate_fan_in_and_fan_out: expected a defined tensor, got an undefined Tensor", Error);
}

}  // namespace test_edge_cases
