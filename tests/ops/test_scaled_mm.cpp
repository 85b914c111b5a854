// tests/ops/test_scaled_mm.cpp: aten::_scaled_mm (Note [_scaled_mm on CPU]): float8 x float8 and
// int8 x int8 against a float64 reference of the same dequantized operands, and against the float
// product with the quantization error bounded; bias, out_dtype, scale_result, operand layouts, meta;
// PyTorch's errors; no derivative.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_scaled_mm {  // Note [Test files in unity builds]

using namespace strata;

namespace {

constexpr ScalarType kF8 = ScalarType::Float8_e4m3fn;
constexpr ScalarType kI8 = ScalarType::Int8;

Tensor randn_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  Generator g;
  g.manual_seed(seed);
  return randn({rows, cols}, {}, &g);
}

float amax(const Tensor& x) {
  float m = 0;
  for (float v : x.to_vector<float>()) m = std::max(m, std::abs(v));
  return m;
}

// x * scale as float8 (|x * scale| <= 448 by the choice of scale), row-major.
Tensor to_float8(const Tensor& x, float scale) { return (x * static_cast<double>(scale)).to(kF8); }

Tensor scalar_f32(float v) { return full({}, static_cast<double>(v), {.dtype = ScalarType::Float32}); }

// The float64 product of the dequantized operands (each float(q) * s rounded to float32, as PyTorch's
// kernel rounds them), row-major M x N, and the sums of |products| that bound fp32 accumulation.
struct Reference {
  std::vector<double> value, magnitude;
};
Reference dequantized_product(const Tensor& a, float sa, const Tensor& b, float sb) {
  const std::int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  const std::vector<float> av = a.contiguous().to_vector<float>(), bv = b.contiguous().to_vector<float>();
  Reference r{std::vector<double>(static_cast<std::size_t>(m * n)), std::vector<double>(static_cast<std::size_t>(m * n))};
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t l = 0; l < k; ++l) {
        const double x = static_cast<float>(av[static_cast<std::size_t>(i * k + l)] * sa);
        const double y = static_cast<float>(bv[static_cast<std::size_t>(l * n + j)] * sb);
        r.value[static_cast<std::size_t>(i * n + j)] += x * y;
        r.magnitude[static_cast<std::size_t>(i * n + j)] += std::abs(x * y);
      }
  return r;
}

}  // namespace

TEST_CASE("_scaled_mm: float8 and int8 products match a float reference within the quantization error") {
  const std::int64_t m = 24, k = 64, n = 40;
  const Tensor x = randn_matrix(m, k, 1), w = randn_matrix(n, k, 2);  // x @ w.t(), as Linear computes
  const float sx = kFloat8E4M3Max / amax(x), sw = kFloat8E4M3Max / amax(w);
  const Tensor xq = to_float8(x, sx), wq = to_float8(w, sw);
  const Tensor out = _scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), {}, {}, ScalarType::Float32);
  CHECK(out.dtype() == ScalarType::Float32);
  CHECK(testing::sizes_of(out) == std::vector<std::int64_t>{m, n});
  const std::vector<double> got = out.to_vector<double>();

  // The dequantized operands' product, up to float32 accumulation.
  const Reference ref = dequantized_product(xq.to(ScalarType::Float32), 1 / sx, wq.t().to(ScalarType::Float32), 1 / sw);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - ref.value[i]) <= 1e-6 * ref.magnitude[i] + 1e-30);

  // The float product: each operand is within a relative 2^-4 of its float value (3 mantissa bits,
  // round to nearest; x * scale stays in float8's normal range except near zero, where the absolute
  // error is at most 2^-10 / scale).
  const Reference fref = dequantized_product(x, 1, w.t().contiguous(), 1);
  double worst_ratio = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double bound = (2 * 0x1p-4 + 0x1p-8) * fref.magnitude[i] + k * (0x1p-10 / sx + 0x1p-10 / sw) * 4;
    CHECK(std::abs(got[i] - fref.value[i]) <= bound);
    worst_ratio = std::max(worst_ratio, std::abs(got[i] - fref.value[i]) / fref.magnitude[i]);
  }
  MESSAGE("float8 _scaled_mm vs float product: max |error| / sum|x||w| = ", worst_ratio);
  CHECK(worst_ratio > 0);  // quantization did change something

  // The same with the operands in other layouts: w row-major (a copy of w.t()), x strided.
  const Tensor w_rows = wq.t().contiguous();
  CHECK(testing::max_abs_diff(_scaled_mm(xq, w_rows, scalar_f32(1 / sx), scalar_f32(1 / sw), {}, {}, ScalarType::Float32), got) == 0);
  const Tensor x_wide = zeros({m, 2 * k}, {.dtype = kF8});
  const Tensor x_strided = slice(x_wide, 1, 0, 2 * k, 2);  // strides {2k, 2}: copied before the product
  x_strided.copy_(xq);
  CHECK(testing::max_abs_diff(x_strided.to(ScalarType::Float32), xq.to(ScalarType::Float32).to_vector<double>()) == 0);
  CHECK(testing::max_abs_diff(_scaled_mm(x_strided, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), {}, {}, ScalarType::Float32),
                              got) == 0);

  // Bias, added in float32 after the product.
  const Tensor bias = randn_matrix(1, n, 3).view({n});
  const std::vector<double> with_bias =
      _scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), bias, {}, ScalarType::Float32).to_vector<double>();
  const std::vector<float> bv = bias.to_vector<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<std::size_t>(i * n + j);
      CHECK(with_bias[at] == static_cast<double>(static_cast<float>(got[at]) + bv[static_cast<std::size_t>(j)]));
    }

  // out_dtype defaults to mat1's: float8, the float32 result rounded; scale_result divides first.
  const Tensor f8_out = _scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw));
  CHECK(f8_out.dtype() == kF8);
  CHECK(testing::max_abs_diff(f8_out.to(ScalarType::Float32), out.to(kF8).to(ScalarType::Float32).to_vector<double>()) == 0);
  const Tensor scaled_out = _scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), {}, scalar_f32(4), kF8);
  CHECK(testing::max_abs_diff(scaled_out.to(ScalarType::Float32),
                              (out * (1.0 / 4.0)).to(kF8).to(ScalarType::Float32).to_vector<double>()) == 0);
  // scale_result applies only to a float8 output, as in PyTorch.
  CHECK(testing::max_abs_diff(_scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), {}, scalar_f32(4), ScalarType::Float32),
                              got) == 0);
  // float64 output: the float32 result converted.
  CHECK(testing::max_abs_diff(_scaled_mm(xq, wq.t(), scalar_f32(1 / sx), scalar_f32(1 / sw), {}, {}, ScalarType::Float64), got) == 0);
}

TEST_CASE("_scaled_mm: int8 x int8 is exact with unit scales and scaled otherwise") {
  const std::int64_t m = 5, k = 70, n = 9;
  std::vector<std::int8_t> av, bv;
  for (std::int64_t i = 0; i < m * k; ++i) av.push_back(static_cast<std::int8_t>((i * 37) % 255 - 127));
  for (std::int64_t i = 0; i < k * n; ++i) bv.push_back(static_cast<std::int8_t>((i * 91) % 251 - 125));
  const Tensor a = tensor(av, {m, k}), b = tensor(bv, {k, n});
  // Every product and partial sum is an integer below 2^24, so float32 accumulation is exact.
  const Tensor exact = mm(a.to(ScalarType::Int64), b.to(ScalarType::Int64));
  const Tensor out = _scaled_mm(a, b, scalar_f32(1), scalar_f32(1), {}, {}, ScalarType::Float32);
  CHECK(testing::max_abs_diff(out, exact.to_vector<double>()) == 0);
  // Default out_dtype is int8: the float result converted (wrapping, as to(int8) does).
  CHECK(_scaled_mm(a, b, scalar_f32(1), scalar_f32(1)).dtype() == kI8);
  CHECK(_scaled_mm(a, b, scalar_f32(1), scalar_f32(1)).to_vector<std::int64_t>() == exact.to(kI8).to_vector<std::int64_t>());
  const Reference ref = dequantized_product(a.to(ScalarType::Float32), 0.01f, b.to(ScalarType::Float32), 0.5f);
  const std::vector<double> got = _scaled_mm(a, b, scalar_f32(0.01f), scalar_f32(0.5f), {}, {}, ScalarType::Float32).to_vector<double>();
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - ref.value[i]) <= 1e-6 * ref.magnitude[i]);
}

TEST_CASE("_scaled_mm with an empty inner dimension is the bias, and with an empty output nothing") {
  const Tensor one = scalar_f32(1);
  const Tensor out = _scaled_mm(zeros({3, 0}, {.dtype = kI8}), zeros({0, 2}, {.dtype = kI8}), one, one,
                                tensor({1.5f, -2.0f}), {}, ScalarType::Float32);
  CHECK(out.to_vector<double>() == std::vector<double>{1.5, -2.0, 1.5, -2.0, 1.5, -2.0});
  CHECK(testing::sizes_of(_scaled_mm(zeros({0, 4}, {.dtype = kF8}), zeros({4, 2}, {.dtype = kF8}), one, one)) ==
        std::vector<std::int64_t>{0, 2});
}

TEST_CASE("_scaled_mm on meta tensors gives the shape and dtype") {
  const Tensor a = empty({3, 4}, {.dtype = kF8, .device = Device::Meta});
  const Tensor b = empty({4, 5}, {.dtype = kF8, .device = Device::Meta});
  const Tensor s = empty({}, {.dtype = ScalarType::Float32, .device = Device::Meta});
  const Tensor out = _scaled_mm(a, b, s, s, {}, {}, ScalarType::Float32);
  CHECK(out.device() == Device::Meta);
  CHECK(testing::sizes_of(out) == std::vector<std::int64_t>{3, 5});
  CHECK(_scaled_mm(a, b, s, s).dtype() == kF8);
}

TEST_CASE("_scaled_mm refuses bad shapes, dtypes and scales with PyTorch's words") {
  const Tensor a = ones({2, 3}).to(kF8), b = ones({3, 4}).to(kF8), one = scalar_f32(1);
  CHECK_THROWS_WITH_AS(_scaled_mm(ones({3}).to(kF8), b, one, one), "[aten::_scaled_mm] mat1 must be a matrix", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, ones({3}).to(kF8), one, one), "[aten::_scaled_mm] mat2 must be a matrix", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, a, one, one), "[aten::_scaled_mm] mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(ones({2, 3}), b, one, one), "[aten::_scaled_mm] Expected mat1 to be Float8 (or Int8) matrix got Float", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, ones({3, 4}).to(kI8), one, one), "[aten::_scaled_mm] Expected mat1 and mat2 to have the same dtype, got Float8_e4m3fn and Char", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one.to(ScalarType::Float64), one), "[aten::_scaled_mm] Both scale_a and scale_b must be float (fp32) tensors.", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, ones({2})), "[aten::_scaled_mm] Now _scaled_mm only supports per-tensor scaling for CPU backend.", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, one, ones({3})), "[aten::_scaled_mm] Bias must be size 4 but got 3", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, one, ones({4}).to(ScalarType::Float64)), "[aten::_scaled_mm] Bias must be a float32 tensor, got float64", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, one, {}, ones({2})), "[aten::_scaled_mm] scale_result must be a float scalar", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, scalar_f32(0), one), "[aten::_scaled_mm] scale_a must hold a positive finite number, got 0", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, scalar_f32(-2)), "[aten::_scaled_mm] scale_b must hold a positive finite number, got -2", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, scalar_f32(NAN), one), "[aten::_scaled_mm] scale_a must hold a positive finite number, got nan", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, scalar_f32(INFINITY)), "[aten::_scaled_mm] scale_b must hold a positive finite number, got inf", Error);
  CHECK_THROWS_WITH_AS(_scaled_mm(a, b, one, one, {}, scalar_f32(0), kF8), "[aten::_scaled_mm] scale_result must hold a positive finite number, got 0", Error);
}

TEST_CASE("_scaled_mm has no derivative: it records NotImplemented, whose backward fails") {
  const Tensor a = ones({2, 3}).to(kF8), b = ones({3, 4}).to(kF8);
  Tensor sa = scalar_f32(1);
  requires_grad_(sa);
  const Tensor out = _scaled_mm(a, b, sa, scalar_f32(1), {}, {}, ScalarType::Float32);
  CHECK(out.requires_grad());
  REQUIRE(out.grad_fn() != nullptr);
  CHECK(out.grad_fn()->name() == "NotImplemented");
  CHECK_THROWS_WITH_AS(backward(sum(out)), "derivative for _scaled_mm is not implemented", Error);
  // Without an input that requires grad nothing is recorded.
  CHECK(_scaled_mm(a, b, scalar_f32(1), scalar_f32(1), {}, {}, ScalarType::Float32).grad_fn() == nullptr);
}

}  // namespace test_scaled_mm
