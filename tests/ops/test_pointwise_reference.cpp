// tests/ops/test_pointwise_reference.cpp: add, add_, sub, mul, mul_, div, neg, exp, relu and
// threshold_backward against reference loops, on contiguous, transposed, broadcast and row operands,
// at sizes around the SIMD width, with their meta functions checked alongside.
#include <cmath>

#include "ops/native/elementwise.h"
#include "tests/ops/op_harness.h"

namespace test_pointwise_reference {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;

namespace {

struct BinaryOp {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> run;
  std::function<double(double, double)> ref;
};

std::vector<BinaryOp> binary_ops() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, [](double a, double b) { return a + b; }},
      {"add alpha=2.5", [](const Tensor& a, const Tensor& b) { return add(a, b, 2.5); },
       [](double a, double b) { return a + 2.5 * b; }},
      {"sub alpha=-0.5", [](const Tensor& a, const Tensor& b) { return sub(a, b, -0.5); },
       [](double a, double b) { return a + 0.5 * b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, [](double a, double b) { return a / b; }},
      {"threshold_backward", [](const Tensor& g, const Tensor& x) { return threshold_backward(g, x, 0.1); },
       [](double g, double x) { return x <= 0.1f ? 0.0 : g; }},
  };
}

Host binary_reference(const std::vector<Host>& in, const std::function<double(double, double)>& f) {
  Host out{{}, bcast_shape(in[0], in[1])};
  for (const auto& idx : all_indices(out.shape)) out.v.push_back(f(bcast_at(in[0], idx), bcast_at(in[1], idx)));
  return out;
}

}  // namespace

TEST_CASE("binary pointwise ops match a reference loop on every layout and size") {
  const Layout2 a_layouts[] = {Layout2::Contiguous, Layout2::Transposed};
  const Layout2 b_layouts[] = {Layout2::Contiguous, Layout2::Transposed, Layout2::Broadcast, Layout2::Row};
  for (const BinaryOp& op : binary_ops())
    for (Layout2 la : a_layouts)
      for (Layout2 lb : b_layouts)
        for (std::int64_t n : simd_sizes()) {
          const std::string name = op.name + " " + layout_name(la) + "/" + layout_name(lb) + " n=" + std::to_string(n);
          check_op(
              name, [&](Device d) { return Inputs{make_operand(la, 3, n, d), make_operand(lb, 3, n, d)}; },
              [&](const Inputs& in) { return op.run(in[0], in[1]); },
              [&](const std::vector<Host>& in) { return binary_reference(in, op.ref); }, 1e-4);
        }
}

TEST_CASE("div_ with a number divides self in place, including a transposed self") {
  for (Layout2 la : {Layout2::Contiguous, Layout2::Transposed})
    for (std::int64_t n : simd_sizes()) {
      INFO(layout_name(la) << " n=" << n);
      const Tensor self = make_operand(la, 3, n, Device::CPU);
      const std::vector<double> before = self.to_vector<double>();
      CHECK(div_(self, 0.7).is_same(self));
      const std::vector<double> after = self.to_vector<double>();
      REQUIRE(after.size() == before.size());
      bool exact = true;
      for (std::size_t i = 0; i < after.size(); ++i)
        exact = exact && static_cast<float>(after[i]) == static_cast<float>(before[i]) / static_cast<float>(0.7);
      CHECK(exact);
    }
  CHECK(div_(tensor<double>({1, 3}), 2).to_vector<double>() == std::vector<double>{0.5, 1.5});
  CHECK(div_(empty({2, 3}, {.device = Device::Meta}), 2.0).is_meta());
  CHECK_THROWS_WITH_AS(div_(tensor<std::int64_t>({4}), 2), "[aten::div_] result type float32 can't be cast to the desired output type int64",
                       Error);
}

TEST_CASE("in-place add_ and mul_ write into self, including a transposed self") {
  for (Layout2 la : {Layout2::Contiguous, Layout2::Transposed})
    for (Layout2 lb : {Layout2::Contiguous, Layout2::Broadcast, Layout2::Row})
      for (std::int64_t n : {1, 8, 17}) {
        const std::string where = std::string(layout_name(la)) + "/" + layout_name(lb) + " n=" + std::to_string(n);
        check_op(
            "add_ alpha=-0.1 " + where, [&](Device d) { return Inputs{make_operand(la, 4, n, d), make_operand(lb, 4, n, d)}; },
            [&](const Inputs& in) {
              const Tensor self = clone(in[0]);  // keep the input for the reference
              const Tensor& out = add_(self, in[1], -0.1);
              CHECK(out.is_same(self));
              return self;
            },
            [&](const std::vector<Host>& in) { return binary_reference(in, [](double a, double b) { return a - 0.1 * b; }); });
        check_op(
            "mul_ " + where, [&](Device d) { return Inputs{make_operand(la, 4, n, d), make_operand(lb, 4, n, d)}; },
            [&](const Inputs& in) { return mul_(clone(in[0]), in[1]); },
            [&](const std::vector<Host>& in) { return binary_reference(in, [](double a, double b) { return a * b; }); });
      }
}

TEST_CASE("unary pointwise ops match a reference loop") {
  for (Layout2 l : {Layout2::Contiguous, Layout2::Transposed, Layout2::Broadcast})
    for (std::int64_t n : simd_sizes()) {
      const std::string where = std::string(layout_name(l)) + " n=" + std::to_string(n);
      auto build = [&](Device d) { return Inputs{make_operand(l, 2, n, d)}; };
      auto ref = [](std::function<double(double)> f) {
        return [f](const std::vector<Host>& in) {
          Host out{{}, in[0].shape};
          for (double x : in[0].v) out.v.push_back(f(x));
          return out;
        };
      };
      check_op("neg " + where, build, [](const Inputs& in) { return neg(in[0]); }, ref([](double x) { return -x; }));
      check_op("exp " + where, build, [](const Inputs& in) { return exp(in[0]); }, ref([](double x) { return std::exp(x); }));
      check_op("reciprocal " + where, build, [](const Inputs& in) { return reciprocal(in[0]); }, ref([](double x) { return 1 / x; }));
      check_op("relu " + where, build, [](const Inputs& in) { return relu(in[0]); },
               ref([](double x) { return x > 0 ? x : 0.0; }));
      check_op("mul.Scalar " + where, build, [](const Inputs& in) { return mul(in[0], Scalar(2.5)); },
               ref([](double x) { return x * 2.5; }));
      check_op("add.Scalar " + where, build, [](const Inputs& in) { return add(in[0], Scalar(1.5), 2); },
               ref([](double x) { return x + 3.0; }));
    }
}

TEST_CASE("type promotion follows PyTorch's result_type") {
  const Tensor f32 = tensor<float>({1.5f, 2.5f});
  const Tensor i64 = tensor<std::int64_t>({1, 2});
  const Tensor f64_0d = scalar_tensor(2.0, ScalarType::Float64);
  const Tensor i64_0d = scalar_tensor(3, ScalarType::Int64);
  const Tensor b = tensor<bool>({true, false});
  CHECK(add(f32, i64).dtype() == ScalarType::Float32);
  CHECK(add(f32, f64_0d).dtype() == ScalarType::Float32);  // a 0-d tensor does not outrank its category
  CHECK(add(i64, f64_0d).dtype() == ScalarType::Float64);  // but a higher category does
  CHECK(add(i64, i64_0d).dtype() == ScalarType::Int64);
  CHECK(add(b, b).dtype() == ScalarType::Bool);
  CHECK(add(b, b).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK(mul(b, i64).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0});
  CHECK(div(i64, i64).dtype() == ScalarType::Float32);
  CHECK(div(i64, tensor<std::int64_t>({2, 4})).to_vector<float>() == std::vector<float>{0.5f, 0.5f});
  CHECK(add(i64, i64, 3).to_vector<std::int64_t>() == std::vector<std::int64_t>{4, 8});
  CHECK(add(f32, f64_0d).to_vector<float>() == std::vector<float>{3.5f, 4.5f});
  const Tensor f = tensor<float>({1, 2});
  add_(f, i64);  // int64 fits into float32
  CHECK(f.to_vector<float>() == std::vector<float>{2, 4});
}

TEST_CASE("relu propagates NaN and keeps integer dtypes") {
  const Tensor x = tensor<float>({-1.f, std::nanf(""), 2.f});
  const std::vector<float> r = relu(x).to_vector<float>();
  CHECK(r[0] == 0.f);
  CHECK(std::isnan(r[1]));
  CHECK(r[2] == 2.f);
  CHECK(relu(tensor<std::int64_t>({-3, 4})).to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 4});
}

// PyTorch's exp is a unary float op: integer and bool inputs compute in the default dtype (float32).
TEST_CASE("exp keeps floating dtypes and turns integers and bools into float32") {
  CHECK(exp(tensor<double>({0.0, 1.0})).dtype() == ScalarType::Float64);
  const Tensor from_int = exp(tensor<std::int64_t>({0, 1, -1}));
  CHECK(from_int.dtype() == ScalarType::Float32);
  CHECK(testing::max_abs_diff(from_int, {1.0, std::exp(1.0), std::exp(-1.0)}) < 1e-6);
  const Tensor from_bool = exp(tensor<bool>({true, false}));
  CHECK(from_bool.dtype() == ScalarType::Float32);
  CHECK(testing::max_abs_diff(from_bool, {std::exp(1.0), 1.0}) < 1e-6);
  CHECK(exp(strata::empty({2, 3}, {.device = Device::Meta})).sizes() == IntArrayRef({2, 3}));
}

TEST_CASE("large pointwise ops split across threads give the same result as small ones") {
  manual_seed(7);
  const Tensor a = randn({2100, 257});
  REQUIRE(a.numel() > ops::kElementwiseGrain);
  const Tensor b = randn({257});
  const Tensor out = add(t(t(a)), b, 0.5);
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), ov = out.to_vector<double>();
  double worst = 0;
  for (std::size_t i = 0; i < av.size(); ++i)
    worst = std::max(worst, std::abs(ov[i] - (av[i] + 0.5 * bv[i % 257])));
  CHECK(worst < 1e-5);
  // Contiguous operands of one shape take the plain pointer loops (binary_span_threaded, unary_span_threaded).
  const Tensor c = randn({2100, 257});
  const std::vector<double> cv = c.to_vector<double>();
  const std::vector<double> sum = add(a, c, 0.5).to_vector<double>(), negated = neg(a).to_vector<double>();
  double worst_contiguous = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    worst_contiguous = std::max(worst_contiguous, std::abs(sum[i] - (av[i] + 0.5 * cv[i])));
    worst_contiguous = std::max(worst_contiguous, std::abs(negated[i] + av[i]));
  }
  CHECK(worst_contiguous < 1e-5);
}

}  // namespace test_pointwise_reference
