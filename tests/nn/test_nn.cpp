// tests/nn/test_nn.cpp: modules, functional composites (and what they dispatch), cross-entropy, and
// parity with PyTorch for a whole training step (logits, loss, gradients, updated parameters).
#include <sstream>

#include "autograd/backward.h"
#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/interpose/interposer.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tests/test_helpers.h"

namespace test_nn {  // Note [Test files in unity builds]

using namespace strata;
using testing::OpLog;
using testing::max_abs_diff;
namespace F = strata::nn::functional;

TEST_CASE("Sequential names, counts and prints its parameters as PyTorch does") {
  manual_seed(0);
  auto model = nn::make_mlp({16, 32, 4});
  const auto named = model->named_parameters();
  REQUIRE(named.size() == 4);
  CHECK(named[0].first == "0.weight");
  CHECK(named[1].first == "0.bias");
  CHECK(named[3].first == "2.bias");
  CHECK(testing::sizes_of(named[2].second) == std::vector<std::int64_t>{4, 32});
  for (const auto& [name, p] : named) {
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
  }
  CHECK(model->repr() ==
        "Sequential(\n  (0): Linear(in_features=16, out_features=32, bias=True)\n  (1): ReLU()\n"
        "  (2): Linear(in_features=32, out_features=4, bias=True)\n)");
  model->eval();
  CHECK_FALSE(model->named_children()[0].second->is_training());
  model->train();
  CHECK(model->is_training());
  CHECK(nn::Linear(3, 2, false).parameters().size() == 1);
  CHECK_THROWS_WITH_AS(nn::make_mlp({5}), "an MLP needs at least an input and an output size, got 1 sizes", Error);
}

TEST_CASE("zero_grad drops gradients, or zeroes them in place") {
  auto model = nn::make_mlp({3, 2});
  backward(sum((*model)(randn({4, 3}))));
  const Tensor g = model->parameters()[0].grad();
  REQUIRE(g.defined());
  model->zero_grad(false);
  CHECK(model->parameters()[0].grad().is_same(g));
  CHECK(g.to_vector<float>() == std::vector<float>(6, 0.0f));
  model->zero_grad();
  CHECK_FALSE(model->parameters()[0].grad().defined());
}

TEST_CASE("linear decomposes as PyTorch's at::linear for each input rank") {
  const Tensor w = randn({4, 3}), b = randn({4});
  auto ops_of = [&](const Tensor& x, const Tensor& bias) {
    OpLog log;
    ModeGuard mode(log);
    const Tensor y = F::linear(x, w, bias);
    return std::make_pair(log.ops, testing::sizes_of(y));
  };
  const auto [ops2, shape2] = ops_of(randn({5, 3}), b);
  CHECK(ops2 == std::vector<std::string>{"aten.t.default", "aten.addmm.default"});
  CHECK(shape2 == std::vector<std::int64_t>{5, 4});
  const auto [ops3, shape3] = ops_of(randn({2, 5, 3}), b);
  CHECK(ops3 == std::vector<std::string>{"aten.view.default", "aten.t.default", "aten.addmm.default", "aten.view.default"});
  CHECK(shape3 == std::vector<std::int64_t>{2, 5, 4});
  const auto [ops1, shape1] = ops_of(randn({3}), b);
  CHECK(shape1 == std::vector<std::int64_t>{4});
  const auto [ops_nb, shape_nb] = ops_of(randn({5, 3}), Tensor());
  CHECK(ops_nb == std::vector<std::string>{"aten.t.default", "aten.mm.default"});
  const Tensor x = randn({5, 3});
  CHECK(max_abs_diff(F::linear(x, w, b), add(mm(x, t(w)), b).to_vector<double>()) < 1e-6);

  // A non-contiguous input takes matmul, then adds the bias in place, unless a mode is on
  // (isTensorSubclassLike), when the mode sees a functional add.
  const Tensor strided = transpose(randn({5, 2, 3}), 0, 1);
  const auto [ops_nc, shape_nc] = ops_of(strided, b);
  CHECK(ops_nc.back() == "aten.add.Tensor");
  CHECK(shape_nc == std::vector<std::int64_t>{2, 5, 4});
  std::ostringstream trace;
  Tensor y;
  {
    DispatchTraceGuard tracing(trace);
    y = F::linear(strided, w, b);
  }
  CHECK(trace.str().find("aten.add_.Tensor") != std::string::npos);
  CHECK(trace.str().find("aten.add.Tensor") == std::string::npos);
  CHECK(max_abs_diff(y, add(F::matmul(contiguous(strided), t(w)), b).to_vector<double>()) < 1e-6);
}

// PyTorch 1.13 (scripts not needed: a TorchDispatchMode printing func names) shows, for
// F.linear(x[2,2,3], w) and a.t().reshape(6), the ops below with aten._reshape_alias where 2.8 under a
// mode calls view (reshape takes view when isTensorSubclassLike, which a mode makes true), and
// UnsafeViewBackward0 for both results: matmul's product and reshape's copy are nobody's views.
TEST_CASE("matmul's N-D product and reshape's copy are _unsafe_view, as in PyTorch") {
  const Tensor x = randn({2, 2, 3}), w = randn({4, 3}), a = randn({2, 3});
  requires_grad_(x);
  requires_grad_(a);
  OpLog log;
  Tensor y, r;
  {
    ModeGuard mode(log);
    y = F::linear(x, w);
  }
  CHECK(log.ops == std::vector<std::string>{"aten.t.default", "aten.view.default", "aten.mm.default", "aten._unsafe_view.default"});
  CHECK(y.grad_fn()->name() == "UnsafeViewBackward0");
  log.ops.clear();
  {
    ModeGuard mode(log);
    r = reshape(t(a), {6});
  }
  CHECK(log.ops == std::vector<std::string>{"aten.t.default", "aten.clone.default", "aten._unsafe_view.default"});
  CHECK(r.grad_fn()->name() == "UnsafeViewBackward0");
  CHECK_FALSE(r.impl()->storage().get() == a.impl()->storage().get());
  log.ops.clear();
  {
    ModeGuard mode(log);
    backward(sum(r));
  }
  CHECK(log.ops == std::vector<std::string>{"aten.sum.default", "aten.ones_like.default", "aten.expand.default", "aten.view.default",
                                            "aten.t.default", "aten.new_empty_strided.default", "aten.copy_.default"});
  CHECK(a.grad().to_vector<float>() == std::vector<float>(6, 1.0f));
}

TEST_CASE("cross_entropy is log_softmax then nll_loss, for every reduction, weight and ignore_index") {
  const Tensor logits = randn({5, 3});
  const Tensor target = tensor<std::int64_t>({0, 2, 1, 2, 0});
  const Tensor logp = _log_softmax(logits, 1);
  const std::vector<float> lp = logp.to_vector<float>();
  const std::vector<float> w{0.5f, 2.0f, 1.0f};
  double none[5], sum_w = 0, sum_l = 0;
  for (int i = 0; i < 5; ++i) {
    const auto ti = target.to_vector<std::int64_t>()[static_cast<std::size_t>(i)];
    none[i] = -lp[static_cast<std::size_t>(i * 3 + ti)] * w[static_cast<std::size_t>(ti)];
    if (ti != 2) {
      sum_w += w[static_cast<std::size_t>(ti)];
      sum_l += none[i];
    }
  }
  const Tensor weight = tensor<float>({0.5f, 2.0f, 1.0f});
  const Tensor r_none = F::cross_entropy(logits, target, {.weight = weight, .reduction = F::Reduction::None});
  CHECK(max_abs_diff(r_none, std::vector<double>(none, none + 5)) < 1e-6);
  const Tensor r_mean = F::cross_entropy(logits, target, {.weight = weight, .ignore_index = 2});
  CHECK(r_mean.item<double>() == doctest::Approx(sum_l / sum_w).epsilon(1e-6));
  const Tensor r_sum = F::cross_entropy(logits, target, {.weight = weight, .reduction = F::Reduction::Sum, .ignore_index = 2});
  CHECK(r_sum.item<double>() == doctest::Approx(sum_l).epsilon(1e-6));
  OpLog log;
  {
    ModeGuard mode(log);
    F::cross_entropy(logits, target);
  }
  CHECK(log.ops == std::vector<std::string>{"aten._log_softmax.default", "aten.nll_loss_forward.default"});
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, tensor<std::int64_t>({0, 1})),
                       "Expected input batch_size (5) to match target batch_size (2).", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, randn({5, 3})),
                       "cross_entropy: strata supports class-index (int64) targets; a float32 target shaped like the input "
                       "holds class probabilities, which are not supported",
                       Error);
  CHECK(F::log_softmax(logits, 1, ScalarType::Float64).dtype() == ScalarType::Float64);
}

TEST_CASE("a training step equals PyTorch's: logits, loss, gradients and updated parameters") {
  for (const char* file : {"numerics_seed0_16-32-4_b8.json", "numerics_seed1_16-32-4_b8.json", "numerics_seed1_4-3_b3.json",
                           "numerics_seed2_8-16-16-3_b5.json", "numerics_seed3_5-7_b1.json",
                           "numerics_seed7_20-10-10-10-5_b2.json"}) {
    INFO(file);
    const nlohmann::json ref = testing::read_golden_json(file);
    manual_seed(ref["seed"].get<std::uint64_t>());
    auto model = nn::make_mlp(ref["sizes"].get<std::vector<std::int64_t>>());
    const Tensor x = tensor<float>(std::vector<float>(ref["x"].begin(), ref["x"].end()),
                                   {ref["batch"].get<std::int64_t>(), ref["sizes"][0].get<std::int64_t>()});
    const Tensor y = tensor<std::int64_t>(ref["y"].get<std::vector<std::int64_t>>());
    const Tensor logits = (*model)(x);
    const Tensor loss = F::cross_entropy(logits, y);
    backward(loss);
    optim::SGD opt(model->parameters(), {.lr = ref["lr"].get<double>()});
    const auto params = model->parameters();
    for (std::size_t i = 0; i < params.size(); ++i)
      CHECK(max_abs_diff(params[i].grad(), testing::json_doubles(ref["grads"][i])) <= 1e-6);
    opt.step();
    CHECK(max_abs_diff(logits, testing::json_doubles(ref["logits"])) <= 1e-6);
    CHECK(std::abs(loss.item<double>() - ref["loss"].get<double>()) <= 1e-6);
    for (std::size_t i = 0; i < params.size(); ++i)
      CHECK(max_abs_diff(params[i], testing::json_doubles(ref["params_after"][i])) <= 1e-6);
  }
}

TEST_CASE("Embedding and Dropout modules print, initialise and run as PyTorch's") {
  manual_seed(0);
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Embedding>(10, 3, -2), std::make_shared<nn::Dropout>(0.25), std::make_shared<nn::Dropout>(1.0),
      std::make_shared<nn::Dropout>()});
  CHECK(model->repr() ==
        "Sequential(\n  (0): Embedding(10, 3, padding_idx=8)\n  (1): Dropout(p=0.25, inplace=False)\n"
        "  (2): Dropout(p=1.0, inplace=False)\n  (3): Dropout(p=0.5, inplace=False)\n)");
  const auto& embedding = static_cast<const nn::Embedding&>(*model->named_children()[0].second);
  CHECK(model->named_parameters().size() == 1);
  const std::vector<float> w = embedding.weight().to_vector<float>();
  CHECK(std::vector<float>(w.begin() + 24, w.begin() + 27) == std::vector<float>{0, 0, 0});  // the padding row
  const Tensor idx = tensor<std::int64_t>({8, 1, 8});
  // Training: Dropout(1.0) zeroes everything; eval(): the dropouts pass the embedding through.
  CHECK((*model)(idx).to_vector<float>() == std::vector<float>(9, 0.0f));
  model->eval();
  const Tensor out = (*model)(idx);
  CHECK(out.to_vector<float>() == nn::functional::embedding(idx, embedding.weight()).to_vector<float>());
  // The padding row gets no gradient.
  model->train();
  backward(sum(nn::functional::embedding(idx, embedding.weight(), 8)));
  const std::vector<float> g = embedding.weight().grad().to_vector<float>();
  CHECK(std::vector<float>(g.begin() + 3, g.begin() + 6) == std::vector<float>{1, 1, 1});
  CHECK(std::vector<float>(g.begin() + 24, g.begin() + 27) == std::vector<float>{0, 0, 0});
  CHECK_THROWS_WITH_AS(nn::Embedding(10, 3, 10), "Padding_idx must be within num_embeddings", Error);
  CHECK_THROWS_WITH_AS(nn::Dropout(1.5), "dropout probability has to be between 0 and 1, but got 1.5", Error);
  CHECK_THROWS_WITH_AS(nn::functional::dropout(embedding.weight(), -0.5), "dropout probability has to be between 0 and 1, but got -0.5",
                       Error);
}

}  // namespace test_nn
