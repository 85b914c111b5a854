// tests/ops/test_tensor_api.cpp: the API a LibTorch user reaches for first: Tensor methods (each the
// free function), operators with tensors and numbers, compound assignment as in-place ops, 2-D
// tensor({{...}}), item<T>(), printing sizes, tensors and modules with <<, and the LibTorch spellings of
// permute, flatten, bmm, baddbmm, batched matmul, topk and sort.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_tensor_api {  // Note [Test files in unity builds]

using namespace strata;
using testing::sizes_of;

namespace {
template <typename T>
std::string printed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
std::vector<float> floats(const Tensor& t) { return contiguous(t).to_vector<float>(); }
}  // namespace

TEST_CASE("Tensor methods give their free functions' results") {
  const Tensor x = tensor<float>({{1, -2, 3}, {-4, 5, -6}});
  const Tensor w = tensor<float>({{1, 0}, {0, 1}, {1, 1}});
  CHECK(floats(x.matmul(w)) == floats(nn::functional::matmul(x, w)));
  CHECK(floats(x.mm(w)) == std::vector<float>{4, 1, -10, -1});
  CHECK(x.sum().item<float>() == -3.0f);
  CHECK(floats(x.sum({1})) == std::vector<float>{2, -5});
  CHECK(sizes_of(x.sum({0}, true)) == std::vector<std::int64_t>{1, 3});
  CHECK(floats(x.t()) == floats(t(x)));
  CHECK(sizes_of(x.view({3, 2})) == std::vector<std::int64_t>{3, 2});
  CHECK(sizes_of(x.reshape({-1})) == std::vector<std::int64_t>{6});
  CHECK(floats(x.relu()) == std::vector<float>{1, 0, 3, 0, 5, 0});
  CHECK(floats(x.neg()) == floats(neg(x)));
  CHECK(floats(x.add(x, 2)) == floats(add(x, x, 2)));
  CHECK(floats(x.add(1)) == std::vector<float>{2, -1, 4, -3, 6, -5});
  CHECK(floats(x.sub(x)) == std::vector<float>(6, 0.0f));
  CHECK(floats(x.mul(2.0)) == floats(mul(x, Scalar(2.0))));
  CHECK(floats(x.div(x)) == std::vector<float>(6, 1.0f));
  CHECK(floats(x.select(0, 1)) == std::vector<float>{-4, 5, -6});
  CHECK(floats(x.slice(1, 1)) == std::vector<float>{-2, 3, 5, -6});
  CHECK(floats(x.narrow(1, 0, 1)) == std::vector<float>{1, -4});
  CHECK(sizes_of(x.unsqueeze(0).squeeze(0)) == std::vector<std::int64_t>{2, 3});
  CHECK(floats(x.transpose(0, 1).contiguous()) == floats(t(x)));
  CHECK(x.to(ScalarType::Float64).dtype() == ScalarType::Float64);
  CHECK(sizes_of(tensor<float>({1}).expand({3})) == std::vector<std::int64_t>{3});
  const Tensor c = x.clone();
  c.zero_();
  CHECK(floats(c) == std::vector<float>(6, 0.0f));
  c.fill_(2.0).mul_(x).add_(x);
  CHECK(floats(c) == std::vector<float>{3, -6, 9, -12, 15, -18});
  c.copy_(x);
  CHECK(floats(c) == floats(x));
  CHECK(x.exp().detach().sum().item<double>() == doctest::Approx(floats(exp(x))[0] + floats(exp(x))[1] + floats(exp(x))[2] +
                                                                   floats(exp(x))[3] + floats(exp(x))[4] + floats(exp(x))[5]));
  // The inference ops' methods.
  const Tensor probs = x.softmax(1);
  CHECK(floats(probs) == floats(softmax(x, 1)));
  CHECK(x.mean().item<float>() == -0.5f);
  CHECK(floats(x.mean({0})) == std::vector<float>{-1.5f, 1.5f, -1.5f});
  CHECK(x.max().item<float>() == 5.0f);
  const auto [values, indices] = x.max(1);
  CHECK(floats(values) == std::vector<float>{3, 5});
  CHECK(indices.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 1});
  CHECK(x.argmax().item<std::int64_t>() == 4);
  CHECK(x.argmax(1).to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 1});
  CHECK(floats(x.sigmoid()) == floats(sigmoid(x)));
  CHECK(floats(x.tanh()) == floats(tanh(x)));
  CHECK(floats(x.gelu("tanh")) == floats(gelu(x, "tanh")));
  // A method records what its function records.
  const Tensor p = tensor<double>({1.0, 2.0});
  requires_grad_(p);
  const Tensor y = p.mul(p).sum();
  CHECK(y.grad_fn()->name() == "SumBackward0");
  backward(y);
  CHECK(p.grad().to_vector<double>() == std::vector<double>{2.0, 4.0});
}

TEST_CASE("item<T>() converts as LibTorch's does and refuses what has no single value") {
  CHECK(tensor<float>({2.5f}).item<float>() == 2.5f);
  CHECK(tensor<float>({2.5f}).item<double>() == 2.5);
  CHECK(tensor<float>({2.5f}).item<std::int64_t>() == 2);  // converted, as item<int64_t>() converts in LibTorch
  CHECK(tensor<std::int64_t>({7}).item<float>() == 7.0f);
  CHECK(tensor<bool>({true}).item<bool>());
  CHECK_THROWS_WITH_AS(tensor<float>({1, 2}).item<float>(), "a Tensor with 2 elements cannot be converted to Scalar", Error);
  CHECK_THROWS_WITH_AS(zeros({0}).item<float>(), "a Tensor with 0 elements cannot be converted to Scalar", Error);
  CHECK_THROWS_WITH_AS(tensor<float>({1e30f}).item<std::int64_t>(), "value cannot be converted to type int64_t without overflow",
                       Error);
}

TEST_CASE("operators with tensors and numbers, and compound assignment in place") {
  const Tensor a = tensor<float>({1, 2, 3});
  const Tensor b = tensor<float>({4, 5, 6});
  CHECK(floats(a + b) == std::vector<float>{5, 7, 9});
  CHECK(floats(a - b) == std::vector<float>{-3, -3, -3});
  CHECK(floats(a * b) == std::vector<float>{4, 10, 18});
  CHECK(floats(b / a) == std::vector<float>{4, 2.5f, 2});
  CHECK(floats(-a) == std::vector<float>{-1, -2, -3});
  CHECK(floats(a * 2) == std::vector<float>{2, 4, 6});
  CHECK(floats(2 * a) == std::vector<float>{2, 4, 6});
  CHECK(floats(a + 1) == std::vector<float>{2, 3, 4});
  CHECK(floats(1.5 + a) == std::vector<float>{2.5f, 3.5f, 4.5f});
  CHECK(floats(a - 1) == std::vector<float>{0, 1, 2});
  CHECK(floats(10 - a) == std::vector<float>{9, 8, 7});
  CHECK(floats(a / 2) == std::vector<float>{0.5f, 1, 1.5f});
  CHECK(floats(6 / a) == std::vector<float>{6, 3, 2});
  // A number promotes as a Python number: float32 stays float32, int64 / 2 is float32, int64 * 2 stays int64.
  CHECK((a * 2.5).dtype() == ScalarType::Float32);
  const Tensor i = tensor<std::int64_t>({3, 4});
  CHECK((i / 2).dtype() == ScalarType::Float32);
  CHECK((i / 2).to_vector<float>() == std::vector<float>{1.5f, 2});
  CHECK((i * 2).dtype() == ScalarType::Int64);
  CHECK((i - 1).to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 3});
  CHECK((i + 0.5).dtype() == ScalarType::Float32);
  // Compound assignment writes in place: the same tensor, its version bumped once per op.
  const Tensor c = clone(a);
  const std::uint32_t v0 = c.impl()->version();
  const Tensor& same = (c += b);
  CHECK(same.is_same(c));
  c -= 1;
  c *= 2;
  c -= a;
  c += 0.5;
  c *= b;
  CHECK(floats(c) == std::vector<float>{(8 - 1 + 0.5f) * 4, (12 - 2 + 0.5f) * 5, (16 - 3 + 0.5f) * 6});
  CHECK(c.impl()->version() == v0 + 6);
  CHECK_THROWS_AS(i += 0.5, Error);  // int64 cannot hold the float result, as in PyTorch
}

TEST_CASE("tensor({{...}}) makes a matrix; its element types are strata's dtypes") {
  const Tensor m = tensor<double>({{1, 2, 3}, {4, 5, 6}});
  CHECK(sizes_of(m) == std::vector<std::int64_t>{2, 3});
  CHECK(m.dtype() == ScalarType::Float64);
  CHECK(m.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(tensor({{true, false}}).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK(tensor({{1.5f}, {2.5f}}).to_vector<float>() == std::vector<float>{1.5f, 2.5f});
  CHECK(tensor({std::int64_t{4}, std::int64_t{5}}).dtype() == ScalarType::Int64);
  CHECK_THROWS_WITH_AS(tensor<float>({{1, 2}, {3}}), "tensor(): expected all rows to have 2 elements, but got a row of 1", Error);
  CHECK(tensor({1, 2}).dtype() == ScalarType::Int64);  // integer literals, as LibTorch's
  // tensor({std::complex<float>{1, 2}}) does not compile: the static_assert in strata::tensor
  // (core/tensor.h, is_tensor_element_v) names the types it takes.
}

TEST_CASE("<< prints sizes, tensors and modules as LibTorch and PyTorch do") {
  const Tensor x = tensor<float>({{1, 2, 3}, {4, 5, 6}});
  CHECK(printed(x.sizes()) == "[2, 3]");
  CHECK(printed(x.strides()) == "[3, 1]");
  CHECK(printed(DimVector{4}) == "[4]");
  CHECK(printed(scalar_tensor(1.0, ScalarType::Float32).sizes()) == "[]");
  CHECK(printed(x) == x.str());
  CHECK(printed(x) == "tensor([[1., 2., 3.],\n        [4., 5., 6.]])");
  nn::Sequential model;
  model.push_back(std::make_shared<nn::Linear>(4, 3));
  model.push_back(std::make_shared<nn::ReLU>());
  model.push_back(std::make_shared<nn::Linear>(3, 2, false));
  CHECK(printed(model) ==
        "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n  (1): ReLU()\n"
        "  (2): Linear(in_features=3, out_features=2, bias=False)\n)");
}

TEST_CASE("LibTorch's spellings of permute, flatten, bmm, baddbmm, batched matmul, topk and sort") {
  const Tensor x = tensor<float>({{1, -2, 3}, {-4, 5, -6}});
  CHECK(floats(x.permute({1, 0})) == floats(t(x)));
  CHECK(sizes_of(x.flatten()) == std::vector<std::int64_t>{6});
  const Tensor a = view(arange(12.0), {2, 2, 3});
  const Tensor b = view(arange(12.0), {2, 3, 2});
  CHECK(floats(a.bmm(b)) == std::vector<float>{10, 13, 28, 40, 172, 193, 244, 274});
  CHECK(floats(strata::bmm(a, b)) == floats(a.bmm(b)));
  CHECK(floats(a.matmul(b)) == floats(a.bmm(b)));
  CHECK(floats(ones({2, 2, 2}).baddbmm(a, b, 2, 1)) == std::vector<float>{12, 15, 30, 42, 174, 195, 246, 276});
  const auto [top, where] = x.topk(2);
  CHECK(floats(top) == std::vector<float>{3, 1, 5, -4});
  CHECK(where.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 0, 1, 0});
  const auto [sorted, order] = x.sort(1, /*descending=*/true);
  CHECK(floats(sorted) == std::vector<float>{3, 1, -2, 5, -4, -6});
  CHECK(order.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 0, 1, 1, 0, 2});
  const auto [ascending, from] = x.sort();
  CHECK(floats(ascending) == std::vector<float>{-2, 1, 3, -6, -4, 5});
  CHECK(from.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0, 2, 2, 0, 1});
}

TEST_CASE("math, comparison and mask methods have LibTorch's spelling") {
  const Tensor x = tensor<float>({{1, -4, 9}, {-16, 25, 0.25f}});
  const Tensor a = x.abs();
  CHECK(floats(a) == std::vector<float>{1, 4, 9, 16, 25, 0.25f});
  CHECK(floats(a.sqrt()) == std::vector<float>{1, 2, 3, 4, 5, 0.5f});
  CHECK(floats(a.rsqrt()) == std::vector<float>{1, 0.5f, 1.0f / 3, 0.25f, 0.2f, 2});
  CHECK(floats(a.pow(2)) == floats(a * a));
  CHECK(floats(x.clamp(0, 1)) == std::vector<float>{1, 0, 1, 0, 1, 0.25f});
  CHECK(floats(x.clamp(std::nullopt, 0)) == std::vector<float>{0, -4, 0, -16, 0, 0});
  CHECK(a.log().allclose(log(a)));
  CHECK(x.sin().pow(2).add(x.cos().pow(2)).allclose(ones_like(x)));
  // Comparisons give bool tensors; a number on the left reverses them, as in LibTorch.
  const Tensor positive = x > 0;
  CHECK(positive.dtype() == ScalarType::Bool);
  CHECK(positive.to_vector<bool>() == std::vector<bool>{true, false, true, false, true, true});
  CHECK((0 < x).equal(positive));
  CHECK((x <= 0).to_vector<bool>() == std::vector<bool>{false, true, false, true, false, false});
  CHECK((x >= a).equal(positive));
  CHECK((x == a).equal(x.eq(a)));
  CHECK((x != a).equal(x < 0));
  CHECK(floats(where(positive, x, zeros_like(x))) == floats(x.relu()));
  CHECK(floats(where(positive, x, 0)) == floats(x.relu()));
  CHECK(floats(x.masked_fill(x < 0, -1)) == std::vector<float>{1, -1, 9, -1, 25, 0.25f});
  const Tensor y = x.clone();
  y.masked_fill_(y > 5, 5);
  CHECK(floats(y) == std::vector<float>{1, -4, 5, -16, 5, 0.25f});
  CHECK(floats(x.triu(1)) == std::vector<float>{0, -4, 9, 0, 0, 0.25f});
  CHECK(floats(x.tril()) == std::vector<float>{1, 0, 0, -16, 25, 0});
}

TEST_CASE("equal and allclose follow LibTorch") {
  const Tensor x = tensor<float>({1, 2, 3});
  CHECK(x.equal(x.clone()));
  CHECK_FALSE(x.equal(x.view({3, 1})));  // same elements, other sizes
  CHECK_FALSE(x.equal(x + 1e-3));
  const Tensor nan = tensor<float>({std::nanf(""), 1});
  CHECK_FALSE(nan.equal(nan));
  CHECK(nan.allclose(nan, 1e-05, 1e-08, /*equal_nan=*/true));
  CHECK_FALSE(nan.allclose(nan));
  CHECK(x.allclose(x + 1e-6));
  CHECK_FALSE(x.allclose(x + 1e-3));
  CHECK(x.allclose(x + 1e-3, 1e-2));
  CHECK(x.allclose(tensor<float>({1, 2, 3}).view({1, 3})));  // broadcast
  const Tensor inf = tensor<float>({INFINITY, -INFINITY});
  CHECK(inf.allclose(inf.clone()));
  CHECK_FALSE(inf.allclose(inf.neg()));
  CHECK(eye(3).sum().item<float>() == 3.0f);
  CHECK(eye(2, 3, {.dtype = ScalarType::Int64}).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0, 0, 0, 1, 0});
  CHECK(floats(linspace(0, 1, 5)) == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1});
  CHECK_THROWS_WITH_AS(x.equal(x.to(ScalarType::Float64)),
                       "[aten::equal] Expected object of scalar type Float but got scalar type Double for argument 'other'",
                       Error);
  CHECK_THROWS_WITH_AS(x.allclose(x.to(ScalarType::Float64)), "[aten::isclose] Float did not match Double", Error);
}

}  // namespace test_tensor_api
