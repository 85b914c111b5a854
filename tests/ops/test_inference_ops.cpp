// tests/ops/test_inference_ops.cpp: the inference ops (sigmoid, tanh, gelu, softmax, mean, max,
// argmax, embedding, dropout, and the backward and helper ops they bring) against PyTorch's numbers
// (tests/golden/inference_ops_torch.json, from scripts/reference/inference_ops_reference.py: values
// and gradients in float64) and against reference loops on contiguous, transposed and empty inputs,
// with their meta functions checked alongside (op_harness.h).
#include <cmath>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/generator.h"
#include "ops/native/elementwise.h"
#include "tests/ops/op_harness.h"

namespace test_inference_ops {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;

namespace {

const nlohmann::json& golden_cases() {
  static const nlohmann::json cases = read_golden_json("inference_ops_torch.json")["cases"];
  return cases;
}

Tensor float64_of(const nlohmann::json& values, const nlohmann::json& shape) {
  return tensor<double>(values.get<std::vector<double>>(), shape.get<std::vector<std::int64_t>>());
}

// Runs fn on the case's input (a float64 leaf), checks the output, then backward from the case's
// grad_output and checks the input's gradient, both against PyTorch's.
void check_golden(const std::string& name, const std::function<Tensor(const Tensor&)>& fn, double tol = 1e-12) {
  INFO(name);
  const nlohmann::json& c = golden_cases().at(name);
  const Tensor x = float64_of(c["input"], c["input_shape"]);
  requires_grad_(x);
  const Tensor out = fn(x);
  CHECK(sizes_of(out) == c["output_shape"].get<std::vector<std::int64_t>>());
  CHECK(max_abs_diff(out, c["output"].get<std::vector<double>>()) <= tol);
  if (!c.contains("grad_output")) return;
  backward(out, float64_of(c["grad_output"], c["output_shape"]));
  REQUIRE(x.grad().defined());
  CHECK(max_abs_diff(x.grad(), c["grad_input"].get<std::vector<double>>()) <= tol);
}

Host unary_reference(const std::vector<Host>& in, const std::function<double(double)>& f) {
  Host out{{}, in[0].shape};
  for (double x : in[0].v) out.v.push_back(f(x));
  return out;
}
Host binary_reference(const std::vector<Host>& in, const std::function<double(double, double)>& f) {
  Host out{{}, in[0].shape};
  for (std::size_t i = 0; i < in[0].v.size(); ++i) out.v.push_back(f(in[0].v[i], in[1].v[i]));
  return out;
}

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

}  // namespace

TEST_CASE("sigmoid, tanh and gelu and their backwards match PyTorch and a reference loop") {
  check_golden("sigmoid", [](const Tensor& x) { return sigmoid(x); });
  check_golden("tanh", [](const Tensor& x) { return tanh(x); });
  check_golden("gelu_none", [](const Tensor& x) { return gelu(x); });
  check_golden("gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); });
  for (Layout2 l : {Layout2::Contiguous, Layout2::Transposed})
    for (std::int64_t n : {0L, 1L, 7L, 33L}) {
      const std::string where = std::string(layout_name(l)) + " n=" + std::to_string(n);
      auto one = [&](Device d) { return Inputs{make_operand(l, 3, n, d)}; };
      auto two = [&](Device d) { return Inputs{make_operand(l, 3, n, d), make_operand(l, 3, n, d)}; };
      check_op("sigmoid " + where, one, [](const Inputs& in) { return sigmoid(in[0]); },
               [](const std::vector<Host>& in) { return unary_reference(in, [](double x) { return 1 / (1 + std::exp(-x)); }); });
      check_op("tanh " + where, one, [](const Inputs& in) { return tanh(in[0]); },
               [](const std::vector<Host>& in) { return unary_reference(in, [](double x) { return std::tanh(x); }); });
      check_op("gelu " + where, one, [](const Inputs& in) { return gelu(in[0]); },
               [](const std::vector<Host>& in) { return unary_reference(in, gelu_ref); });
      check_op("gelu tanh " + where, one, [](const Inputs& in) { return gelu(in[0], "tanh"); },
               [](const std::vector<Host>& in) { return unary_reference(in, gelu_tanh_ref); });
      check_op("sigmoid_backward " + where, two, [](const Inputs& in) { return sigmoid_backward(in[0], in[1]); },
               [](const std::vector<Host>& in) { return binary_reference(in, [](double g, double y) { return g * (1 - y) * y; }); });
      check_op("tanh_backward " + where, two, [](const Inputs& in) { return tanh_backward(in[0], in[1]); },
               [](const std::vector<Host>& in) { return binary_reference(in, [](double g, double y) { return g * (1 - y * y); }); });
      // gelu_backward against central differences of the reference gelu.
      for (const char* approximate : {"none", "tanh"}) {
        const auto f = std::string(approximate) == "none" ? gelu_ref : gelu_tanh_ref;
        check_op(std::string("gelu_backward ") + approximate + " " + where, two,
                 [approximate](const Inputs& in) { return gelu_backward(in[0], in[1], approximate); },
                 [f](const std::vector<Host>& in) {
                   return binary_reference(in, [f](double g, double x) { return g * (f(x + 1e-6) - f(x - 1e-6)) / 2e-6; });
                 },
                 1e-4);
      }
    }
  // Integer and bool inputs compute in float32, as exp does.
  CHECK(sigmoid(tensor<std::int64_t>({0, 1})).dtype() == ScalarType::Float32);
  CHECK(max_abs_diff(tanh(tensor<bool>({true, false})), {std::tanh(1.0), 0.0}) < 1e-6);
}

TEST_CASE("softmax matches PyTorch along any dimension, forward and backward") {
  check_golden("softmax_dim0", [](const Tensor& x) { return softmax(x, 0); });
  check_golden("softmax_dim1", [](const Tensor& x) { return softmax(x, 1); });
  check_golden("softmax_dim-1", [](const Tensor& x) { return softmax(x, -1); });
  check_golden("softmax_3d_dim1", [](const Tensor& x) { return softmax(x, 1); });
  for (std::int64_t dim : {0, 1})
    for (bool transposed : {false, true})
      for (std::int64_t n : {0, 1, 5, 9}) {
        const std::string where = "dim=" + std::to_string(dim) + (transposed ? " transposed" : "") + " n=" + std::to_string(n);
        auto build = [&](Device d) {
          return Inputs{transposed ? t(randn({n, 4}, {.device = d})) : randn({4, n}, {.device = d}),
                        transposed ? t(randn({n, 4}, {.device = d})) : randn({4, n}, {.device = d})};
        };
        // Calls f(row) with the flat indices of each row along dim of a [4, n] host tensor.
        auto rows = [dim](const Host& h, const std::function<void(const std::vector<std::size_t>&)>& f) {
          const std::size_t r = static_cast<std::size_t>(h.shape[0]), c = static_cast<std::size_t>(h.shape[1]);
          for (std::size_t o = 0; o < (dim == 1 ? r : c); ++o) {
            std::vector<std::size_t> row;
            for (std::size_t i = 0; i < (dim == 1 ? c : r); ++i) row.push_back(dim == 1 ? o * c + i : i * c + o);
            f(row);
          }
        };
        auto softmax_ref = [rows](const Host& x) {
          Host out{x.v, x.shape};
          rows(x, [&](const std::vector<std::size_t>& row) {
            double m = -INFINITY, s = 0;
            for (std::size_t k : row) m = std::max(m, x.v[k]);
            for (std::size_t k : row) s += std::exp(x.v[k] - m);
            for (std::size_t k : row) out.v[k] = std::exp(x.v[k] - m) / s;
          });
          return out;
        };
        check_op("_softmax " + where, build, [dim](const Inputs& in) { return _softmax(in[0], dim); },
                 [&](const std::vector<Host>& in) { return softmax_ref(in[0]); });
        check_op(
            "_softmax_backward_data " + where, build,
            [dim](const Inputs& in) { return _softmax_backward_data(in[1], _softmax(in[0], dim), dim, ScalarType::Float32); },
            [&](const std::vector<Host>& in) {
              const Host y = softmax_ref(in[0]);
              Host out{y.v, y.shape};
              rows(y, [&](const std::vector<std::size_t>& row) {
                double dot = 0;
                for (std::size_t k : row) dot += in[1].v[k] * y.v[k];
                for (std::size_t k : row) out.v[k] = y.v[k] * (in[1].v[k] - dot);
              });
              return out;
            });
      }
  // softmax(dtype) converts first; large logits do not overflow.
  CHECK(softmax(tensor<float>({1, 2}), 0, ScalarType::Float64).dtype() == ScalarType::Float64);
  CHECK(max_abs_diff(softmax(tensor<float>({1000, 1000}), 0), {0.5, 0.5}) == 0);
}

TEST_CASE("mean matches PyTorch over all, some and kept dimensions") {
  check_golden("mean", [](const Tensor& x) { return mean(x); });
  check_golden("mean_dim_0_2", [](const Tensor& x) { return mean(x, {0, 2}); });
  check_golden("mean_dim_1_keepdim", [](const Tensor& x) { return mean(x, {1}, true); });
  check_op("mean.dim transposed", [](Device d) { return Inputs{t(randn({5, 3}, {.device = d}))}; },
           [](const Inputs& in) { return mean(in[0], {1}); },
           [](const std::vector<Host>& in) {
             Host out{{}, {3}};
             for (std::size_t r = 0; r < 3; ++r) {
               double s = 0;
               for (std::size_t c = 0; c < 5; ++c) s += in[0].v[r * 5 + c];
               out.v.push_back(s / 5);
             }
             return out;
           });
  // An empty reduction is NaN (0 / 0), an empty output is empty; a dtype converts before summing.
  CHECK(std::isnan(mean(strata::empty({0})).item<float>()));
  CHECK(sizes_of(mean(strata::empty({0, 3}), {1})) == std::vector<std::int64_t>{0});
  CHECK(mean(tensor<float>({1, 2}), ScalarType::Float64).dtype() == ScalarType::Float64);
  CHECK(mean(tensor<float>({1, 2}), ScalarType::Float64).item<double>() == 1.5);
}

TEST_CASE("max, max.dim and argmax match PyTorch, with ties and NaN") {
  check_golden("max_ties", [](const Tensor& x) { return max(x); });
  const std::tuple<const char*, int, bool> dim_cases[] = {{"max_dim0", 0, false}, {"max_dim1_keepdim", 1, true}, {"max_dim-1", -1, false}};
  for (const auto& dim_case : dim_cases) {
    const auto& [name, dim_of_case, keepdim_of_case] = dim_case;
    const int dim = dim_of_case;  // a lambda may not capture a structured binding (clang 14)
    const bool keepdim = keepdim_of_case;
    check_golden(name, [dim, keepdim](const Tensor& x) { return std::get<0>(max(x, dim, keepdim)); });
    const nlohmann::json& c = golden_cases().at(name);
    const Tensor x = float64_of(c["input"], c["input_shape"]);
    CHECK(std::get<1>(max(x, dim, keepdim)).to_vector<std::int64_t>() == c["indices"].get<std::vector<std::int64_t>>());
    CHECK(argmax(x, dim, keepdim).to_vector<std::int64_t>() == c["argmax"].get<std::vector<std::int64_t>>());
    CHECK(argmax(t(t(x)), dim, keepdim).dtype() == ScalarType::Int64);
  }
  const nlohmann::json& c = golden_cases().at("max_nan");
  std::vector<double> with_nan;  // JSON has no NaN: the script writes null
  for (const nlohmann::json& v : c["input"]) with_nan.push_back(v.is_null() ? NAN : v.get<double>());
  const Tensor x = tensor<double>(with_nan, {2, 3});
  const auto [values, indices] = max(x, 1);
  CHECK(std::isnan(values.to_vector<double>()[0]));
  CHECK(std::isnan(values.to_vector<double>()[1]));
  CHECK(indices.to_vector<std::int64_t>() == c["indices"].get<std::vector<std::int64_t>>());
  CHECK(argmax(x, 1).to_vector<std::int64_t>() == c["argmax"].get<std::vector<std::int64_t>>());
  CHECK(argmax(x).item<std::int64_t>() == c["argmax_all"].get<std::int64_t>());
  CHECK(std::isnan(max(x).item<double>()));
  // A transposed input, every dtype max accepts, 0-d inputs, and the keepdim shapes.
  const Tensor m = t(tensor<float>({1, 9, 3, 4, 2, 8}, {2, 3}));  // [[1, 4], [9, 2], [3, 8]]
  CHECK(std::get<1>(max(m, 1)).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0, 1});
  CHECK(argmax(m, 0).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 2});
  CHECK(max(tensor<std::int64_t>({3, 7, 7})).item<std::int64_t>() == 7);
  CHECK(max(tensor<bool>({false, true})).item<bool>());
  CHECK(sizes_of(argmax(m, std::nullopt, true)) == std::vector<std::int64_t>{1, 1});
  CHECK(sizes_of(std::get<0>(max(scalar_tensor(3.0, ScalarType::Float32), 0, true))).empty());
  CHECK(sizes_of(std::get<0>(max(strata::empty({0, 3}), 1))) == std::vector<std::int64_t>{0});
  CHECK(sizes_of(argmax(strata::empty({0, 3}), 1, true)) == std::vector<std::int64_t>{0, 1});
  // value_selecting_reduction_backward puts each gradient at its index; eq and isnan test elements.
  const Tensor vs = value_selecting_reduction_backward(tensor<float>({5, 6}), 1, tensor<std::int64_t>({2, 0}), {2, 3}, false);
  CHECK(vs.to_vector<float>() == std::vector<float>{0, 0, 5, 6, 0, 0});
  CHECK(eq(tensor<float>({1, 2, 3}), tensor<std::int64_t>({1})).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(isnan(tensor<float>({1, NAN})).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK(isnan(tensor<std::int64_t>({1})).to_vector<bool>() == std::vector<bool>{false});
  // Meta tensors get the shapes and dtypes.
  const Tensor meta = strata::empty({4, 5}, {.device = Device::Meta});
  const auto [mv, mi] = max(meta, 0, true);
  CHECK((mv.is_meta() && mi.is_meta() && sizes_of(mi) == std::vector<std::int64_t>{1, 5} && mi.dtype() == ScalarType::Int64));
  CHECK(sizes_of(max(meta)).empty());
  CHECK(argmax(meta, -1).is_meta());
  CHECK(eq(meta, meta).dtype() == ScalarType::Bool);
  CHECK(sizes_of(value_selecting_reduction_backward(strata::empty({4}, {.device = Device::Meta}), 0,
                                                    strata::empty({4}, {.dtype = ScalarType::Int64, .device = Device::Meta}),
                                                    {3, 4}, false)) == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("max.dim and argmax over many rows split across threads give the serial answer") {
  manual_seed(3);
  const Tensor x = randn({2100, 300});
  REQUIRE(x.numel() > ops::kElementwiseGrain);
  const std::vector<float> v = x.to_vector<float>();
  const std::vector<std::int64_t> idx = std::get<1>(max(x, 1)).to_vector<std::int64_t>();
  const std::vector<std::int64_t> arg = argmax(x, 1).to_vector<std::int64_t>();
  bool ok = true;
  for (std::size_t r = 0; r < 2100; ++r) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < 300; ++c)
      if (v[r * 300 + c] > v[r * 300 + best]) best = c;
    ok = ok && idx[r] == static_cast<std::int64_t>(best) && arg[r] == static_cast<std::int64_t>(best);
  }
  CHECK(ok);
}

TEST_CASE("embedding matches PyTorch, with padding_idx and scale_grad_by_freq") {
  for (const char* name : {"embedding_padding_1", "embedding_scale_grad_by_freq"}) {
    const nlohmann::json& c = golden_cases().at(name);
    const Tensor idx = tensor<std::int64_t>(c["indices"].get<std::vector<std::int64_t>>(), {2, 3});
    const bool padding = std::string(name) == "embedding_padding_1";
    check_golden(name, [&](const Tensor& w) { return embedding(w, idx, padding ? 1 : -1, !padding); });
  }
  // A transposed weight and non-contiguous indices read where they are; empty indices give [.., D].
  const Tensor w = t(tensor<float>({0, 1, 2, 3, 4, 5}, {2, 3}));  // rows [0, 3], [1, 4], [2, 5]
  const Tensor idx = t(tensor<std::int64_t>({2, 0, 1, 2}, {2, 2}));  // [[2, 1], [0, 2]]
  CHECK(embedding(w, idx).to_vector<float>() == std::vector<float>{2, 5, 1, 4, 0, 3, 2, 5});
  CHECK(sizes_of(embedding(w, strata::empty({0, 4}, {.dtype = ScalarType::Int64}))) == std::vector<std::int64_t>{0, 4, 2});
  const Tensor g = embedding_dense_backward(tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}), tensor<std::int64_t>({2, 2, 0}), 4, 0, false);
  CHECK(g.to_vector<float>() == std::vector<float>{0, 0, 0, 0, 4, 6, 0, 0});
  const Tensor meta = embedding(strata::empty({10, 3}, {.device = Device::Meta}),
                                strata::empty({2, 5}, {.dtype = ScalarType::Int64, .device = Device::Meta}));
  CHECK((meta.is_meta() && sizes_of(meta) == std::vector<std::int64_t>{2, 5, 3}));
  CHECK(sizes_of(embedding_dense_backward(strata::empty({2, 5, 3}, {.device = Device::Meta}),
                                          strata::empty({2, 5}, {.dtype = ScalarType::Int64, .device = Device::Meta}), 7, -1,
                                          false)) == std::vector<std::int64_t>{7, 3});
}

TEST_CASE("dropout is the identity in eval and for p = 0, zero for p = 1, and scales what it keeps") {
  check_golden("dropout_eval", [](const Tensor& x) { return dropout(x, 0.5, false); });
  check_golden("dropout_p0", [](const Tensor& x) { return dropout(x, 0.0, true); });
  check_golden("dropout_p1", [](const Tensor& x) { return dropout(x, 1.0, true); });
  const Tensor x = strata::empty({4});
  CHECK(dropout(x, 0.5, false).is_same(x));  // no copy, as PyTorch returns its input
  CHECK(dropout(x, 0.0, true).is_same(x));
  CHECK(dropout(strata::empty({0, 3}), 0.5, true).numel() == 0);
  // dropout in training (bernoulli_ noise): each element is 0 or x / (1 - p), about 1 - p of them
  // kept (the standard deviation of the kept fraction over 20000 elements is 0.003), and the same
  // seed drops the same elements.
  {
    manual_seed(7);
    const Tensor in = add(rand({200, 100}), Scalar(1.0));  // no zeros, so a zero output was dropped
    const Tensor out = dropout(in, 0.3, true);
    const std::vector<float> iv = in.to_vector<float>(), ov = out.to_vector<float>();
    bool scaled = true;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < iv.size(); ++i) {
      if (ov[i] == 0.0f) continue;
      ++kept;
      scaled = scaled && ov[i] == iv[i] * static_cast<float>(1.0 / 0.7);  // x * (1 / (1 - p)) in float
    }
    CHECK(scaled);
    CHECK(std::abs(static_cast<double>(kept) / 20000.0 - 0.7) < 0.015);
    manual_seed(7);
    const Tensor again = add(rand({200, 100}), Scalar(1.0));
    CHECK(dropout(again, 0.3, true).to_vector<float>() == ov);
    CHECK(dropout(in, 0.3, true).to_vector<float>() != ov);  // the generator moved on
    // For a small keep probability too: p = 0.9 keeps about 10%.
    const Tensor sparse = dropout(ones({100, 100}), 0.9, true);
    const double kept_sparse = sum(sparse).item<float>() / 10.0 / 10000.0;
    CHECK(std::abs(kept_sparse - 0.1) < 0.01);
  }
  // bernoulli_.float: 0 or 1 in self's dtype, in place, about p ones, reproducible from the seed;
  // p outside [0, 1] is refused in PyTorch's words.
  {
    manual_seed(3);
    const Tensor b = empty({10000}, {.dtype = ScalarType::Float64});
    CHECK(bernoulli_(b, 0.25).is_same(b));
    const std::vector<double> bv = b.to_vector<double>();
    double ones_count = 0;
    bool binary = true;
    for (double v : bv) {
      binary = binary && (v == 0.0 || v == 1.0);
      ones_count += v;
    }
    CHECK(binary);
    CHECK(std::abs(ones_count / 10000.0 - 0.25) < 0.015);
    manual_seed(3);
    CHECK(bernoulli_(empty({10000}, {.dtype = ScalarType::Float64}), 0.25).to_vector<double>() == bv);
    CHECK(bernoulli_(empty({3}, {.dtype = ScalarType::Int64}), 1.0).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1, 1});
    CHECK(bernoulli_(empty({3}), 0.0).to_vector<float>() == std::vector<float>{0, 0, 0});
    CHECK(bernoulli_(empty({4, 2}, {.device = Device::Meta}), 0.5).is_meta());
    CHECK_THROWS_WITH_AS(bernoulli_(empty({3}), 1.5), "[aten::bernoulli_] bernoulli_ expects p to be in [0, 1], but got p=1.5", Error);
    CHECK_THROWS_WITH_AS(dropout(empty({3}), 1.5, true),
                         "[aten::dropout] dropout probability has to be between 0 and 1, but got 1.5", Error);
  }
  // native_dropout, an op of its own: kept elements are x / (1 - p), the mask says which; about 1 - p kept.
  manual_seed(5);
  const Tensor in = add(randn({200, 100}), Scalar(10.0));
  const auto [out, mask] = native_dropout(in, 0.25, true);
  REQUIRE(mask.dtype() == ScalarType::Bool);
  const std::vector<float> iv = in.to_vector<float>(), ov = out.to_vector<float>();
  const std::vector<bool> mv = mask.to_vector<bool>();
  bool exact = true;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < iv.size(); ++i) {
    exact = exact && ov[i] == (mv[i] ? iv[i] * (1.0f / 0.75f) : 0.0f);
    kept += mv[i];
  }
  CHECK(exact);
  CHECK(std::abs(static_cast<double>(kept) / 20000.0 - 0.75) < 0.02);
  // The same seed gives the same mask; eval gives a copy and an all-true mask.
  manual_seed(5);
  const Tensor again = add(randn({200, 100}), Scalar(10.0));
  CHECK(std::get<1>(native_dropout(again, 0.25, true)).to_vector<bool>() == mv);
  const auto [eval_out, eval_mask] = native_dropout(in, 0.25, false);
  CHECK((!eval_out.is_same(in) && eval_out.to_vector<float>() == iv));
  CHECK(eval_mask.to_vector<bool>() == std::vector<bool>(iv.size(), true));
  // native_dropout_backward: grad * mask * scale; gradients through dropout reach only kept elements.
  CHECK(native_dropout_backward(tensor<float>({1, 2, 3}), tensor<bool>({true, false, true}), 2.0).to_vector<float>() ==
        std::vector<float>{2, 0, 6});
  const Tensor leaf = add(randn({50}), Scalar(0.0));
  requires_grad_(leaf);
  manual_seed(9);
  const Tensor y = dropout(leaf, 0.5, true);
  backward(sum(y));
  const std::vector<float> grads = leaf.grad().to_vector<float>(), yv = y.to_vector<float>();
  bool consistent = true;
  for (std::size_t i = 0; i < grads.size(); ++i) consistent = consistent && (yv[i] == 0.0f ? grads[i] == 0.0f : grads[i] == 2.0f);
  CHECK(consistent);
  // Meta: shapes and dtypes only.
  const auto [mo, mm] = native_dropout(strata::empty({3, 2}, {.device = Device::Meta}), 0.5, true);
  CHECK((mo.is_meta() && mm.dtype() == ScalarType::Bool && sizes_of(mm) == std::vector<std::int64_t>{3, 2}));
}

}  // namespace test_inference_ops
