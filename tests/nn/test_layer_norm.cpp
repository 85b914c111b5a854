// tests/nn/test_layer_norm.cpp: layer normalisation as LibTorch spells it (F::layer_norm with
// LayerNormFuncOptions, nn::LayerNorm), what a dispatch mode sees of it, and its gradients: one
// native_layer_norm_backward call for input, weight and bias (Note [One formula for several inputs]).
// Expected numbers are PyTorch 1.13's (F.layer_norm on the same inputs, then (y * c).sum().backward()).
#include <algorithm>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/variable.h"
#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_layer_norm {  // Note [Test files in unity builds]

using namespace strata;
using testing::max_abs_diff;
namespace F = strata::nn::functional;

namespace {
Tensor leaf_of(std::initializer_list<float> values, std::vector<std::int64_t> sizes) {
  Tensor t = tensor<float>(values, sizes);
  requires_grad_(t);
  return t;
}
// Records the names of the announced calls and how many positional and keyword arguments each hands
// on, then calls through.
struct NameLog final : FunctionMode {
  std::vector<std::string> names;
  std::vector<std::pair<std::size_t, std::size_t>> num_args;
  std::string_view name() const override { return "NameLog"; }
  void torch_function(FunctionCall& call) override {
    names.emplace_back(call.name());
    num_args.emplace_back(call.args().size(), call.kwargs().size());
    call.call_through();
  }
};
}  // namespace

// PyTorch's F.layer_norm announces itself with input and normalized_shape positional and weight, bias
// and eps as keywords (handle_torch_function(layer_norm, ..., weight=weight, bias=bias, eps=eps)).
TEST_CASE("a function mode sees F.layer_norm with PyTorch's arguments, and gets its result back") {
  const Tensor x = randn({2, 3});
  const Tensor w = randn({3});
  NameLog log;
  Tensor y;
  {
    FunctionModeGuard guard(log);
    y = F::layer_norm(x, F::LayerNormFuncOptions({3}).weight(w).eps(1e-3));
  }
  CHECK(log.names == std::vector<std::string>{"torch.nn.functional.layer_norm"});
  CHECK(log.num_args == std::vector<std::pair<std::size_t, std::size_t>>{{2, 3}});
  CHECK(max_abs_diff(y, layer_norm(x, {3}, w, Tensor(), 1e-3).to_vector<double>()) == 0);
}

TEST_CASE("F::layer_norm gives PyTorch's output and gradients, through one native_layer_norm_backward") {
  const Tensor x = leaf_of({1, 2, 4, 0, -1, 3}, {2, 3});
  const Tensor w = leaf_of({1, 2, 0.5f}, {3});
  const Tensor b = leaf_of({0.1f, 0, -0.1f}, {3});
  const Tensor c = tensor<float>({1, -1, 2, 0.5f, 3, -2}, {2, 3});
  Tensor y;
  const std::vector<std::string> forward =
      testing::ops_seen([&] { y = F::layer_norm(x, F::LayerNormFuncOptions({3}).weight(w).bias(b).eps(1e-5)); });
  CHECK(forward == std::vector<std::string>{"aten.native_layer_norm.default"});
  CHECK(y.grad_fn()->name() == "NativeLayerNormBackward0");
  CHECK(max_abs_diff(y, {-0.9690413475036621, -0.5345206260681152, 0.5681508779525757, -0.29223155975341797,
                         -1.9611577987670898, 0.5864052772521973}) < 1e-6);
  const Tensor loss = sum(mul(y, c));
  const std::vector<std::string> backward = testing::ops_seen([&] { strata::backward(loss); });
  CHECK(std::count(backward.begin(), backward.end(), "aten.native_layer_norm_backward.default") == 1);
  CHECK(max_abs_diff(x.grad(), {1.0308598279953003, -1.5462924242019653, 0.515432596206665, -1.3577226400375366,
                                1.0182985067367554, 0.3394240140914917}) < 1e-5);
  CHECK(max_abs_diff(w.grad(), {-1.2651571035385132, -2.674476385116577, -0.07301759719848633}) < 1e-5);
  CHECK(max_abs_diff(b.grad(), {1.5, 2.0, 0.0}) < 1e-6);
}

TEST_CASE("layer_norm's formula computes only the gradients asked for, each as with all three") {
  const Tensor x = leaf_of({1, 2, 4, 0, -1, 3}, {2, 3});
  const Tensor w = leaf_of({1, 2, 0.5f}, {3});
  const Tensor b = tensor<float>({0.1f, 0, -0.1f});  // needs no gradient
  const Tensor c = tensor<float>({1, -1, 2, 0.5f, 3, -2}, {2, 3});
  const Tensor y = layer_norm(x, {3}, w, b);
  const auto gw = autograd::grad({sum(mul(y, c))}, {w});
  REQUIRE(gw.size() == 1);
  CHECK(max_abs_diff(gw[0], {-1.2651571035385132, -2.674476385116577, -0.07301759719848633}) < 1e-5);
  const Tensor y2 = layer_norm(x, {3}, w, b);
  const auto gx = autograd::grad({sum(mul(y2, c))}, {x});
  CHECK(max_abs_diff(gx[0], {1.0308598279953003, -1.5462924242019653, 0.515432596206665, -1.3577226400375366,
                             1.0182985067367554, 0.3394240140914917}) < 1e-5);
}

TEST_CASE("a gradient of layer_norm's gradient goes through NativeLayerNormBackwardBackward0") {
  // PyTorch 1.13: x.grad after autograd.grad(create_graph=True), then the backward of sum(gx * d) (no
  // weight; sum(gx) alone would be 0 whatever x, as a row of layer_norm's gradient sums to 0).
  const Tensor x = leaf_of({1, 2, 4, 0, -1, 3}, {2, 3});
  const Tensor c = tensor<float>({1, -1, 2, 0.5f, 3, -2}, {2, 3});
  const auto gx = autograd::grad({sum(mul(layer_norm(x, {3}), c))}, {x}, {}, std::nullopt, /*create_graph=*/true);
  REQUIRE(gx[0].requires_grad());
  CHECK(gx[0].grad_fn()->name() == "NativeLayerNormBackwardBackward0");
  strata::backward(sum(mul(gx[0], tensor<float>({2, 0, -1, 1, 3, 0.5f}, {2, 3}))));
  REQUIRE(x.grad().defined());
  CHECK(max_abs_diff(x.grad(), {0.916304886341095, -0.7731432914733887, -0.1431620717048645, -0.7615392208099365,
                                0.7267345190048218, 0.03480476140975952}) < 1e-5);
}

TEST_CASE("native_layer_norm's mean and rstd keep the leading dimensions, and bad shapes get PyTorch's errors") {
  const auto [out, mean, rstd] = native_layer_norm(randn({2, 3, 4}), {3, 4}, Tensor(), Tensor(), 1e-5);
  CHECK(testing::sizes_of(out) == std::vector<std::int64_t>{2, 3, 4});
  CHECK(testing::sizes_of(mean) == std::vector<std::int64_t>{2, 1, 1});
  CHECK(testing::sizes_of(rstd) == std::vector<std::int64_t>{2, 1, 1});
  CHECK_THROWS_WITH_AS(layer_norm(randn({3, 4}), {3}),
                       "[aten::native_layer_norm] Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[3, 4]",
                       Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({3, 4}), F::LayerNormFuncOptions({4}).weight(randn({3}))),
                       "[aten::native_layer_norm] Expected weight to be of same shape as normalized_shape, but got weight of "
                       "shape [3] and normalized_shape = [4]",
                       Error);
}

TEST_CASE("nn::LayerNorm starts as ones and zeros and prints as PyTorch's") {
  nn::LayerNorm ln({3});
  CHECK(ln.repr() == "LayerNorm((3,), eps=1e-05, elementwise_affine=True)");
  CHECK(ln.weight().to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK(ln.bias().to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(ln.parameters().size() == 2);
  const Tensor x = randn({2, 3});
  CHECK(max_abs_diff(ln(x), layer_norm(x, {3}).to_vector<double>()) < 1e-7);
  nn::LayerNorm plain({2, 3}, 1e-3, false);
  CHECK(plain.repr() == "LayerNorm((2, 3), eps=0.001, elementwise_affine=False)");
  CHECK(plain.parameters().empty());
}

}  // namespace test_layer_norm
