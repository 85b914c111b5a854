// tests/ops/test_half_kernels.cpp: float16 and bfloat16 through strata's kernels (Note [float16 and
// bfloat16 compute in float], ops/compute_in_float.h): each result equals the float32 result rounded
// once, for contiguous, transposed, broadcast, strided and in-place operands, several outputs, tensor
// lists, indices, autograd and factories; and what still refuses them.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_half_kernels {  // Note [Test files in unity builds]

using namespace strata;

namespace {

constexpr ScalarType kF32 = ScalarType::Float32;

std::vector<int> bits_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::uint16_t*>(c.raw_data());
  return std::vector<int>(p, p + c.numel());
}

// `got` (float16 or bfloat16) is `expected` (float32, computed from the same rounded inputs) rounded.
void check_rounded(const Tensor& got, const Tensor& expected) {
  REQUIRE(is_reduced_float(got.dtype()));
  CHECK(testing::sizes_of(got) == testing::sizes_of(expected));
  CHECK(bits_of(got) == bits_of(expected.to(got.dtype())));
}

// Values that float16 and bfloat16 hold exactly, so the float32 reference starts from the same numbers.
Tensor values(ScalarType dt, IntArrayRef sizes, double scale = 1.0) {
  return mul(arange(numel_of(sizes)).view(sizes), scale).sin().to(dt);
}

}  // namespace

TEST_CASE("float16 and bfloat16 pointwise ops on transposed, broadcast and strided operands") {
  for (ScalarType dt : {ScalarType::Float16, ScalarType::BFloat16}) {
    CAPTURE(dt);
    const Tensor a = values(dt, {4, 6}), b = values(dt, {6, 4}, 0.7);
    const Tensor af = a.to(kF32), bf = b.to(kF32);
    check_rounded(add(a, b.t()), add(af, bf.t()));                                   // transposed
    check_rounded(mul(a, b.t().select(0, 2)), mul(af, bf.t().select(0, 2)));         // a row, broadcast
    check_rounded(sub(a.slice(1, 0, 6, 2), a.slice(1, 1, 6, 2), 0.5),                // strided, with gaps
                  sub(af.slice(1, 0, 6, 2), af.slice(1, 1, 6, 2), 0.5));
    check_rounded(div(a.expand({3, 4, 6}), 3.0), div(af.expand({3, 4, 6}), 3.0));    // expanded
    check_rounded(exp(a.t()), exp(af.t()));
    check_rounded(relu(a), relu(af));
    CHECK(eq(a, a.clone()).to_vector<bool>() == std::vector<bool>(24, true));
    CHECK(testing::sizes_of(gt(a, 0.0)) == std::vector<std::int64_t>{4, 6});
    CHECK(gt(a, 0.0).to_vector<bool>() == gt(af, 0.0).to_vector<bool>());
    CHECK(add(a, af).dtype() == kF32);  // promoted: no rounding
    CHECK(add(a, af).to_vector<float>() == add(af, af).to_vector<float>());
  }
}

TEST_CASE("float16 and bfloat16 in place: self rounded after the float32 update, views write their base") {
  for (ScalarType dt : {ScalarType::Float16, ScalarType::BFloat16}) {
    CAPTURE(dt);
    const Tensor a = values(dt, {3, 4});
    Tensor f = a.to(kF32);
    Tensor h = a.clone();
    h.add_(values(dt, {4}, 0.3), 2.5);
    f.add_(values(dt, {4}, 0.3).to(kF32), 2.5);
    CHECK(bits_of(h) == bits_of(f.to(dt)));
    h.mul_(h);  // self and other are one tensor
    f = f.to(dt).to(kF32);
    f.mul_(f);
    CHECK(bits_of(h) == bits_of(f.to(dt)));
    // A view of a row, updated in place, writes into its base.
    Tensor base = a.clone();
    mul_(base.select(0, 1), 2.0);
    CHECK(bits_of(base.select(0, 1)) == bits_of(mul(a.select(0, 1).to(kF32), 2.0).to(dt)));
    CHECK(bits_of(base.select(0, 0)) == bits_of(a.select(0, 0)));
    // A float32 self with a float16 other: other is widened, self stays float32.
    Tensor g = ones({4});
    g.add_(values(dt, {4}));
    CHECK(g.dtype() == kF32);
    CHECK(g.to_vector<float>() == add(ones({4}), values(dt, {4}).to(kF32)).to_vector<float>());
    // Promotion that does not fit self is refused before any compute, as in PyTorch.
    Tensor i = tensor<std::int64_t>({1, 2});
    CHECK_THROWS_WITH_AS(i.add_(values(dt, {2})), doctest::Contains("can't be cast to the desired output type int64"), Error);
  }
}

TEST_CASE("float16 and bfloat16 reductions, softmax, mm and linear compute in float") {
  for (ScalarType dt : {ScalarType::Float16, ScalarType::BFloat16}) {
    CAPTURE(dt);
    const Tensor a = values(dt, {5, 7}), w = values(dt, {3, 7}, 1.3), bias = values(dt, {3}, 0.2);
    const Tensor af = a.to(kF32), wf = w.to(kF32), biasf = bias.to(kF32);
    check_rounded(sum(a), sum(af));
    check_rounded(sum(a, {0}), sum(af, {0}));
    check_rounded(mean(a.t(), {1}, true), mean(af.t(), {1}, true));
    check_rounded(softmax(a, 1), softmax(af, 1));
    check_rounded(mm(a, w.t()), mm(af, wf.t()));
    check_rounded(addmm(bias, a, w.t()), addmm(biasf, af, wf.t()));
    CHECK(sum(a, kF32).dtype() == kF32);  // sum(dtype=float32) of float16: no rounding
    CHECK(sum(a, kF32).item<float>() == sum(af).item<float>());
    check_rounded(sum(af, dt), sum(af));  // sum(dtype=float16) of float32: computed in float32, rounded
    const auto [values_out, indices] = max(a, 1);
    check_rounded(values_out, std::get<0>(max(af, 1)));
    CHECK(indices.dtype() == ScalarType::Int64);
    CHECK(indices.to_vector<std::int64_t>() == std::get<1>(max(af, 1)).to_vector<std::int64_t>());
    CHECK(argmax(a).item<std::int64_t>() == argmax(af).item<std::int64_t>());
    // A float16 accumulator would stop at 2048; PyTorch's and strata's accumulate in float.
    CHECK(sum(ones({3000}, {.dtype = dt})).item<double>() == (dt == ScalarType::Float16 ? 3000.0 : 3008.0));  // 3000 is a bfloat16 tie: to even, 3008 (PyTorch 1.13 gives 3008)
  }
}

TEST_CASE("float16 and bfloat16 tensor lists, indices, masks and factories") {
  for (ScalarType dt : {ScalarType::Float16, ScalarType::BFloat16}) {
    CAPTURE(dt);
    const Tensor a = values(dt, {3, 4}), b = values(dt, {2, 4}, 0.5);
    const Tensor c = cat({a, b});
    CHECK(c.dtype() == dt);
    CHECK(bits_of(c.slice(0, 3, 5)) == bits_of(b));
    CHECK(bits_of(stack({a, a}).select(0, 1)) == bits_of(a));
    CHECK(cat({a, b.to(kF32)}).dtype() == kF32);
    const Tensor idx = tensor<std::int64_t>({2, 0, 2});
    CHECK(bits_of(embedding(a, idx).select(0, 0)) == bits_of(a.select(0, 2)));
    CHECK(bits_of(gather(a, 1, tensor<std::int64_t>({1, 1, 1}, {3, 1}))) == bits_of(a.slice(1, 1, 2)));
    const Tensor masked = masked_fill(a, gt(a, 0.0), 1e6);
    CHECK(masked.dtype() == dt);
    CHECK(masked.max().item<double>() == (dt == ScalarType::Float16 ? INFINITY : 999424.0));  // 1e6 rounded
    CHECK(bits_of(where(gt(a, 0.0), a, b.slice(0, 0, 1))) ==
          bits_of(where(gt(a, 0.0), a.to(kF32), b.slice(0, 0, 1).to(kF32)).to(dt)));
    CHECK(bits_of(zeros({2}, {.dtype = dt})) == std::vector<int>{0, 0});
    CHECK(ones({2}, {.dtype = dt}).to_vector<float>() == std::vector<float>{1.0f, 1.0f});
    CHECK(full({1}, 0.1, {.dtype = dt}).item<double>() == static_cast<double>(tensor({0.1f}).to(dt).item<double>()));
    CHECK(arange(0, 5, 1, {.dtype = dt}).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
    CHECK(zeros_like(a).dtype() == dt);
    CHECK(empty_like(a).dtype() == dt);
    Tensor r = empty({1000}, {.dtype = dt});
    normal_(r, 0.0, 1.0);
    CHECK(r.dtype() == dt);
    CHECK(std::abs(mean(r.to(kF32)).item<double>()) < 0.2);
  }
}

TEST_CASE("float16 and bfloat16 under autograd: gradients in the leaf's dtype") {
  for (ScalarType dt : {ScalarType::Float16, ScalarType::BFloat16}) {
    CAPTURE(dt);
    Tensor x = values(dt, {2, 3});
    requires_grad_(x);
    const Tensor y = sum(mul(x, x));
    CHECK(y.dtype() == dt);
    backward(y);
    REQUIRE(x.grad().defined());
    CHECK(x.grad().dtype() == dt);
    CHECK(bits_of(x.grad()) == bits_of(mul(x.detach().to(kF32), 2.0).to(dt)));
  }
}

TEST_CASE("float16 and bfloat16: what refuses them names the op and the dtype") {
  const Tensor h = ones({2}, {.dtype = ScalarType::Float16});
  // A kernel's own type switch, reached without the float32 detour.
  CHECK_THROWS_WITH_AS(visit_dtype(ScalarType::Float16, [](auto) {}), "not implemented for 'Half'", Error);
  CHECK_THROWS_WITH_AS(visit_dtype(ScalarType::BFloat16, [](auto) {}), "not implemented for 'BFloat16'", Error);
  CHECK_THROWS_WITH_AS(add(h, ones({2}).to(ScalarType::Float8_e4m3fn)),
                       "[aten::add] Promotion for Float8 Types is not supported, attempted to promote Half and Float8_e4m3fn",
                       Error);
  // Integer-only ops refuse them as they refuse float32 (the meta functions see the real dtype).
  CHECK_THROWS_AS(embedding(ones({3, 2}), h), Error);
}

}  // namespace test_half_kernels
