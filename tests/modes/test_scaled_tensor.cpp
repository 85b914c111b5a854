// tests/modes/test_scaled_tensor.cpp: ScaledTensor (Note [ScaledTensor]): dynamic scaling as torchao
// does it, flatten/unflatten, the ops its handler runs for mm (t, clone, t, reciprocal, reciprocal,
// _scaled_mm), views on the data, the order add_ converts its operands in, and the seed model with
// ScaledTensor weights: logits within the quantization error of the float model's, and SGD steps that
// train through it.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_observer.h"
#include "core/dispatch/dispatcher.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "modes/scaled_tensor.h"
#include "tracer/cli/mlp_experiment.h"

namespace test_scaled_tensor {  // Note [Test files in unity builds]

using namespace strata;
using strata::tracer::ScaledTensor;

namespace {

// Every op called from the top, in order (nested calls included), and the dtype of each one's first
// argument when it is a tensor (which tensor an op ran on).
struct OpRecorder final : DispatchObserver {
  std::vector<std::string> ops;
  std::vector<std::optional<ScalarType>> first_dtypes;
  OpRecorder() { set_dispatch_observer(this); }
  ~OpRecorder() override { set_dispatch_observer(nullptr); }
  void on_op_enter(const OperatorHandle& op, std::span<const IValue> args) override {
    ops.push_back(op.name().qualified() + (op.name().overload.empty() ? "" : "." + op.name().overload));
    const bool tensor = !args.empty() && args[0].is_tensor() && args[0].to_tensor().defined();
    first_dtypes.push_back(tensor ? std::optional<ScalarType>(args[0].to_tensor().dtype()) : std::nullopt);
  }
  void on_op_exit() override {}
  void on_scope_enter(std::string_view) override {}
  void on_scope_exit() override {}
  std::size_t count(const std::string& name) const { return static_cast<std::size_t>(std::count(ops.begin(), ops.end(), name)); }
};

std::vector<double> host(const Tensor& t) { return t.contiguous().to_vector<double>(); }

// |a| @ |b| for row-major host matrices a [m, k], b [k, n].
std::vector<double> abs_matmul(const std::vector<double>& a, const std::vector<double>& b, std::size_t m, std::size_t k,
                               std::size_t n) {
  std::vector<double> out(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < k; ++l)
      for (std::size_t j = 0; j < n; ++j) out[i * n + j] += std::abs(a[i * k + l]) * std::abs(b[l * n + j]);
  return out;
}

// Relative error of one float8 quantization of a value in the normal range: half a unit in the last of 3 bits.
constexpr double kUnit = 0x1p-4;

}  // namespace

TEST_CASE("ScaledTensor: dynamic scaling, to_float, flatten and unflatten") {
  const Tensor x = tensor({0.5f, -3.0f, 2.0f, 1e-3f, 0.0f, 2.9f}, {2, 3});
  const Tensor s = ScaledTensor::from_float(x);
  const ScaledTensor* p = ScaledTensor::of(s);
  REQUIRE(p != nullptr);
  CHECK(s.dtype() == ScalarType::Float32);
  CHECK(testing::sizes_of(s) == std::vector<std::int64_t>{2, 3});
  CHECK(p->data().dtype() == ScalarType::Float8_e4m3fn);
  CHECK(p->scale().item<double>() == static_cast<double>(static_cast<float>(448.0 / 3.0)));
  // The largest magnitude maps to 448 exactly; every value comes back within float8's rounding.
  CHECK(p->data().to(ScalarType::Float32).to_vector<float>()[1] == -448.0f);
  const std::vector<float> back = ScaledTensor::to_float(s).to_vector<float>(), orig = x.to_vector<float>();
  for (std::size_t i = 0; i < back.size(); ++i) CHECK(std::abs(back[i] - orig[i]) <= kUnit * std::abs(orig[i]) + 1e-6);
  const FlattenedTensor flat = p->flatten(s);
  CHECK(flat.names == std::vector<std::string>{"_data", "_scale"});
  CHECK(flat.inner[0].is_same(p->data()));
  CHECK(flat.inner[1].is_same(p->scale()));
  const Tensor again = p->unflatten(flat, s.sizes(), s.strides());
  CHECK(ScaledTensor::of(again)->data().is_same(p->data()));
  // An all-zero tensor gets torchao's clamped amax (1e-12), not a division by zero.
  CHECK(ScaledTensor::of(ScaledTensor::from_float(zeros({3})))->scale().item<double>() == static_cast<double>(static_cast<float>(448.0 / 1e-12)));
  // int8: 127 / amax, rounded to nearest.
  const Tensor si = ScaledTensor::from_float(x, ScalarType::Int8);
  CHECK(ScaledTensor::of(si)->data().to_vector<std::int64_t>() == std::vector<std::int64_t>{21, -127, 85, 0, 0, 123});
  CHECK_THROWS_WITH_AS(ScaledTensor::from_float(tensor({1.0f, NAN})),
                       "ScaledTensor: dynamic scaling of a tensor holding nan (its amax has no scale)", Error);
  CHECK_THROWS_WITH_AS(ScaledTensor::from_float(x, ScalarType::Int64),
                       "ScaledTensor: the data dtype must be float8_e4m3fn or int8, got int64", Error);
}

TEST_CASE("ScaledTensor: mm runs t, clone, t, reciprocal, reciprocal, _scaled_mm as torchao's float8_mm does") {
  const Tensor a = ScaledTensor::from_float(randn({4, 8}));
  const Tensor b = ScaledTensor::from_float(randn({8, 6}));  // row-major: made column-major first
  Tensor out;
  std::vector<std::string> ops;
  {
    OpRecorder rec;
    out = mm(a, b);
    ops = rec.ops;
  }
  CHECK(ops == std::vector<std::string>{"aten::mm", "aten::t", "aten::clone", "aten::t", "aten::reciprocal",
                                        "aten::reciprocal", "aten::_scaled_mm"});
  CHECK(out.subclass() == nullptr);
  CHECK(out.dtype() == ScalarType::Float32);
  const std::vector<double> expected = host(mm(ScaledTensor::to_float(a), ScaledTensor::to_float(b)));
  CHECK(testing::max_abs_diff(out, expected) <= 1e-4);

  // A transposed b (what Linear passes) is column-major already: no copy.
  const Tensor w = ScaledTensor::from_float(randn({6, 8}));
  {
    OpRecorder rec;
    const Tensor wt = t(w);
    CHECK(ScaledTensor::of(wt) != nullptr);
    CHECK(ScaledTensor::of(wt)->scale().is_same(ScaledTensor::of(w)->scale()));
    mm(a, wt);
    CHECK(rec.ops == std::vector<std::string>{"aten::t", "aten::mm", "aten::reciprocal", "aten::reciprocal", "aten::_scaled_mm"});
  }
  // Views, clone and detach act on the data and keep the scale.
  for (const Tensor& v : {view(w, {48}), clone(w), detach(w), transpose(w, 0, 1)}) {
    const ScaledTensor* p = ScaledTensor::of(v);
    REQUIRE(p != nullptr);
    CHECK(p->scale().is_same(ScaledTensor::of(w)->scale()));
    CHECK(testing::sizes_of(v) == testing::sizes_of(p->data()));
  }
  // Other ops see the float value; writing into a ScaledTensor other than by add_ is refused.
  const Tensor doubled = mul(w, Scalar(2.0));
  CHECK(doubled.subclass() == nullptr);
  CHECK(testing::max_abs_diff(doubled, host(mul(ScaledTensor::to_float(w), Scalar(2.0)))) == 0);
  CHECK_THROWS_WITH_AS(mul_(w, tensor({2.0f})), "[aten::mul_] ScaledTensor: aten::mul_.Tensor would write into a ScaledTensor (only add_.Tensor may)",
                       Error);
}

// Note [An op's operands are dispatched in a written order]: add_'s handler converts the other operand
// to float before self, whichever compiler built it. Int8 data for the other tells the two apart.
TEST_CASE("ScaledTensor: add_ converts the other ScaledTensor to float first") {
  const Tensor self = ScaledTensor::from_float(randn({2, 3}));
  const Tensor other = ScaledTensor::from_float(randn({2, 3}), ScalarType::Int8);
  OpRecorder rec;
  add_(self, other);
  REQUIRE(rec.ops.size() >= 6);
  const std::vector<std::string> first(rec.ops.begin(), rec.ops.begin() + 6);
  CHECK(first == std::vector<std::string>{"aten::add_.Tensor", "aten::_to_copy", "aten::div.Tensor", "aten::_to_copy",
                                          "aten::div.Tensor", "aten::add.Tensor"});
  CHECK(rec.first_dtypes[1] == ScalarType::Int8);
  CHECK(rec.first_dtypes[3] == ScalarType::Float8_e4m3fn);
}

TEST_CASE("ScaledTensor weights: the seed model's logits within the quantization error, and SGD trains it") {
  const tracer::MlpConfig config;  // 16-32-4, batch 8, seed 0
  manual_seed(config.seed);
  const auto model = nn::make_mlp(config.sizes);
  const auto [x, y] = tracer::make_batch(config);
  const std::vector<Tensor> params = model->parameters();  // w0, b0, w1, b1
  const Tensor w0 = params[0], b0 = params[1], w1 = params[2], b1 = params[3];

  // The float model, layer by layer.
  Tensor h_float, logits_float;
  {
    autograd::NoGradGuard no_grad;
    h_float = nn::functional::relu(nn::functional::linear(x, w0, b0));
    logits_float = nn::functional::linear(h_float, w1, b1);
  }
  Tensor sw0 = ScaledTensor::from_float(detach(w0), ScalarType::Float8_e4m3fn, true);
  Tensor sw1 = ScaledTensor::from_float(detach(w1), ScalarType::Float8_e4m3fn, true);
  Tensor h_scaled, logits;
  {
    autograd::NoGradGuard no_grad;
    h_scaled = nn::functional::relu(nn::functional::linear(x, sw0, b0));
    logits = nn::functional::linear(h_scaled, sw1, b1);
  }
  CHECK(logits.subclass() == nullptr);
  // The bound: each of x, w, h and the product rounds once in float8 (relative kUnit), layer one's
  // error passes through ReLU (1-Lipschitz) and is multiplied by |w1|.
  const std::size_t batch = 8, in = 16, hidden = 32, out = 4;
  const std::vector<double> e1 = abs_matmul(host(x), host(t(w0)), batch, in, hidden);
  std::vector<double> err1(e1.size());
  for (std::size_t i = 0; i < e1.size(); ++i) err1[i] = (2 * kUnit + kUnit * kUnit) * e1[i] + 1e-6;
  const std::vector<double> hq = host(h_scaled), hf = host(h_float);
  for (std::size_t i = 0; i < hq.size(); ++i) CHECK(std::abs(hq[i] - hf[i]) <= err1[i]);
  const std::vector<double> through = abs_matmul(err1, host(t(w1)), batch, hidden, out);
  const std::vector<double> direct = abs_matmul(hq, host(t(w1)), batch, hidden, out);
  const std::vector<double> lq = host(logits), lf = host(logits_float);
  double worst = 0, worst_rel = 0, largest = 0;
  for (std::size_t i = 0; i < lq.size(); ++i) {
    CHECK(std::abs(lq[i] - lf[i]) <= (2 * kUnit + kUnit * kUnit) * direct[i] + through[i] + 1e-6);
    worst = std::max(worst, std::abs(lq[i] - lf[i]));
    largest = std::max(largest, std::abs(lf[i]));
  }
  worst_rel = worst / largest;
  MESSAGE("seed model (16-32-4, batch 8, seed 0), float8 weights and inputs: max |logit error| = ", worst,
          ", relative to max |logit| = ", worst_rel);
  CHECK(worst > 0);
  CHECK(worst_rel < 0.1);

  // Training: autograd sits above the subclass, so the graph is the float model's; the gradients are
  // plain float32 tensors, and the one backward mm that involves a ScaledTensor (layer two's input
  // gradient, grad @ w1) runs _scaled_mm.
  Tensor loss0;
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    OpRecorder rec;
    const Tensor h = nn::functional::relu(nn::functional::linear(x, sw0, b0));
    const Tensor loss = nn::functional::cross_entropy(nn::functional::linear(h, sw1, b1), y);
    const std::size_t forward_scaled = rec.count("aten::_scaled_mm");
    backward(loss);
    CHECK(forward_scaled == 2);
    CHECK(rec.count("aten::_scaled_mm") == 3);
    REQUIRE(sw0.grad().defined());
    CHECK(sw0.grad().subclass() == nullptr);
    CHECK(sw0.grad().dtype() == ScalarType::Float32);
    CHECK(testing::sizes_of(sw0.grad()) == std::vector<std::int64_t>{32, 16});
    losses.push_back(loss.item<double>());
    {
      autograd::NoGradGuard no_grad;
      for (Tensor* p : {&sw0, &sw1}) {
        add_(*p, p->grad(), -config.lr);
        set_grad(*p, Tensor());
      }
    }
    CHECK(ScaledTensor::of(sw0) != nullptr);
    CHECK(ScaledTensor::of(sw0)->data().dtype() == ScalarType::Float8_e4m3fn);
  }
  MESSAGE("seed model with float8 weights, 5 SGD steps on the weights (lr 0.1): losses ", losses[0], " ", losses[1], " ",
          losses[2], " ", losses[3], " ", losses[4]);
  CHECK(losses[4] < losses[0]);
}

}  // namespace test_scaled_tensor
