// tests/ops/test_empty_shapes.cpp: tensors without elements whose other sizes multiply to 2^31 and
// more ([2^31, 5, 0]). Each kernel returns at once (Note [An empty tensor's kernel returns at once]):
// these cases finish and give the right empty (or zero) result, where softmax used to loop over 10^10
// empty rows and mm to copy a 2^33-element expanded operand. No timings are asserted; a regression
// shows as a test that does not finish.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_empty_shapes {  // Note [Test files in unity builds]

using namespace strata;
using testing::sizes_of;
using Sizes = std::vector<std::int64_t>;

namespace {
constexpr std::int64_t kBig = std::int64_t{1} << 31;

Tensor empty_f32(IntArrayRef sizes) { return strata::empty(sizes); }
}  // namespace

TEST_CASE("softmax over an empty tensor with huge other dimensions, forward and backward") {
  for (std::int64_t dim : {-1, 0, 1}) {
    INFO("dim " << dim);
    const Tensor x = empty_f32({kBig, 5, 0});
    requires_grad_(x);
    const Tensor y = _log_softmax(x, dim);
    CHECK(sizes_of(y) == Sizes{kBig, 5, 0});
    backward(y, zeros_like(y));
    REQUIRE(x.grad().defined());
    CHECK(sizes_of(x.grad()) == Sizes{kBig, 5, 0});
    CHECK(sizes_of(_log_softmax_backward_data(zeros_like(y), y, dim, ScalarType::Float32)) == Sizes{kBig, 5, 0});
  }
  // Along a huge dimension of an empty tensor, and transposed (the kernel's contiguous copy is empty too).
  CHECK(sizes_of(_log_softmax(empty_f32({0, kBig}), 1)) == Sizes{0, kBig});
  CHECK(sizes_of(_log_softmax(transpose(empty_f32({kBig, 3, 0}), 0, 2), 2)) == Sizes{0, 3, kBig});
}

TEST_CASE("reductions of empty tensors with huge other dimensions") {
  const Tensor x = empty_f32({kBig, 5, 0});
  CHECK(sizes_of(sum(x, {0})) == Sizes{5, 0});
  CHECK(sizes_of(sum(x, {0}, true)) == Sizes{1, 5, 0});
  CHECK(sizes_of(sum(transpose(x, 0, 2), {2})) == Sizes{0, 5});
  // Summing away the empty dimension gives zeros; summing everything gives 0.
  const Tensor y = empty_f32({3, kBig, 0});
  CHECK(sum(y, {1, 2}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(sum(y).item<float>() == 0);
  CHECK(sum(y, ScalarType::Int64).item<std::int64_t>() == 0);
  CHECK(sum_to(expand(empty_f32({1, 0}), {kBig, 0}), {1, 0}).numel() == 0);
}

TEST_CASE("matrix products whose output is empty do not touch huge operands") {
  // The operands are expanded (stride 0) views: 2^33 elements that nothing may copy.
  const Tensor tall = expand(ones_like(empty_f32({1, 4})), {kBig, 4});
  const Tensor wide = expand(ones_like(empty_f32({4, 1})), {4, kBig});
  CHECK(sizes_of(mm(empty_f32({0, kBig}), expand(ones_like(empty_f32({1, 4})), {kBig, 4}))) == Sizes{0, 4});
  CHECK(sizes_of(mm(wide, empty_f32({kBig, 0}))) == Sizes{4, 0});
  CHECK(sizes_of(mm(t(tall), empty_f32({kBig, 0}))) == Sizes{4, 0});
  CHECK(sizes_of(addmm(empty_f32({4, 0}), wide, empty_f32({kBig, 0}))) == Sizes{4, 0});
  CHECK(sizes_of(addmm(empty_f32({4}), empty_f32({0, kBig}), tall)) == Sizes{0, 4});
  const Tensor tall_i = expand(ones_like(empty_f32({1, 4}), {.dtype = ScalarType::Int64}), {kBig, 4});
  CHECK(sizes_of(mm(strata::empty({0, kBig}, {.dtype = ScalarType::Int64}), tall_i)) == Sizes{0, 4});
  // k = 0: the output has elements and is zeros (beta * self for addmm).
  CHECK(mm(empty_f32({2, 0}), empty_f32({0, 3})).to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(addmm(ones_like(empty_f32({3})), empty_f32({2, 0}), empty_f32({0, 3}), 2).to_vector<float>() ==
        std::vector<float>(6, 2.0f));
}

TEST_CASE("pointwise, copy, fill and random ops on empty tensors with huge other dimensions") {
  const Tensor x = empty_f32({kBig, 5, 0});
  const Tensor xt = transpose(x, 0, 2);
  for (const Tensor& r : {add(x, ones_like(empty_f32({1}))), mul(xt, xt), relu(xt), exp(x), neg(xt), div(x, x),
                          sub(x, empty_f32({5, 0})), mul(x, 2.0), threshold_backward(x, x, 0)})
    CHECK(r.numel() == 0);
  CHECK(sizes_of(add(x, empty_f32({5, 0}))) == Sizes{kBig, 5, 0});
  // Broadcast to an empty output whose other sizes multiply past 2^63. Its strides are contiguous,
  // where ordering its dimensions after a transposed input multiplied 2^40 * 2^40 (PyTorch's wrap to
  // (2^40, 0, 1)); where even contiguous strides overflow, it is an error.
  constexpr std::int64_t k40 = std::int64_t{1} << 40;
  const auto row = [](std::int64_t n) { return expand(ones_like(empty_f32({1})), {n}); };
  const Tensor wide = add(transpose(empty_f32({1, 0, k40}), 0, 2), row(k40));
  CHECK(sizes_of(wide) == Sizes{k40, 0, k40});
  CHECK(testing::strides_of(wide) == Sizes{k40, k40, 1});
  CHECK_THROWS_WITH_AS(add(empty_f32({0, k40, 1}), row(k40)), "[aten::add] Stride calculation overflowed", Error);
  CHECK(sizes_of(clone(xt)) == Sizes{0, 5, kBig});
  CHECK(sizes_of(to(xt, ScalarType::Float64)) == Sizes{0, 5, kBig});
  CHECK(sizes_of(copy_(empty_f32({kBig, 5, 0}), empty_f32({5, 0}))) == Sizes{kBig, 5, 0});
  CHECK(sizes_of(copy_(xt, empty_f32({1}))) == Sizes{0, 5, kBig});
  fill_(xt, 1.0);
  zero_(x);
  add_(xt, ones_like(empty_f32({1})));
  mul_(x, empty_f32({5, 0}));
  CHECK(sizes_of(ones_like(xt)) == Sizes{0, 5, kBig});
  // An empty tensor whose strides fit but whose sizes (0 counted as 1) multiply past 2^63: the *_like
  // ops compare its strides with the contiguous ones without multiplying past the first dimension.
  constexpr std::int64_t k62 = std::int64_t{1} << 62;
  const Tensor tall_like = empty_like(empty_f32({k62, 0, 4}));
  CHECK(sizes_of(tall_like) == Sizes{k62, 0, 4});
  CHECK(testing::strides_of(tall_like) == Sizes{4, 4, 1});
  normal_(xt);
  uniform_(xt);
  CHECK(sizes_of(randn({kBig, 5, 0})) == Sizes{kBig, 5, 0});
  CHECK(sizes_of(randint(0, 3, {0, kBig})) == Sizes{0, kBig});
  CHECK(x.str() == "tensor([], size=(2147483648, 5, 0))");
}

TEST_CASE("nll_loss on an empty batch with many classes") {
  const Tensor logits = empty_f32({0, kBig});
  const Tensor target = strata::empty({0}, {.dtype = ScalarType::Int64});
  for (std::int64_t reduction : {0, 1, 2}) {
    const auto [out, total] = nll_loss_forward(logits, target, Tensor(), reduction, -100);
    CHECK(out.numel() == (reduction == 0 ? 0 : 1));
    const Tensor grad = nll_loss_backward(reduction == 0 ? empty_f32({0}) : ones_like(out), logits, target, Tensor(),
                                          reduction, -100, total);
    CHECK(sizes_of(grad) == Sizes{0, kBig});
  }
  CHECK(sizes_of(_log_softmax(transpose(empty_f32({kBig, 0}), 0, 1), 1)) == Sizes{0, kBig});
}

TEST_CASE("clone and the *_like ops of an empty permuted tensor keep its strides, as PyTorch's preserve_format") {
  // PyTorch's strides (torch.empty(*shape).permute(*perm), then empty_like, clone, zeros_like, .to,
  // from Debian's 1.13; 2.8's empty_like is the same code): an empty tensor is contiguous, hence non-overlapping and dense, so empty_like takes its
  // strides as they are (empty_strided).
  // The permutations (1, 0), (2, 0, 1), (0, 2, 1) and (1, 0), as transposes.
  const std::vector<Tensor> permuted = {transpose(empty_f32({0, 3}), 0, 1),
                                        transpose(transpose(empty_f32({2, 0, 3}), 0, 2), 1, 2),
                                        transpose(empty_f32({0, 3, 4}), 1, 2), transpose(empty_f32({3, 0}), 0, 1)};
  const std::vector<Sizes> expected = {{1, 3}, {1, 3, 3}, {12, 1, 4}, {1, 1}};
  for (std::size_t i = 0; i < permuted.size(); ++i) {
    const Tensor& x = permuted[i];
    CAPTURE(i);
    CHECK(testing::strides_of(x) == expected[i]);
    for (const Tensor& copy : {empty_like(x), clone(x), zeros_like(x), ones_like(x), to(x, ScalarType::Float64)})
      CHECK(testing::strides_of(copy) == expected[i]);
  }
}

TEST_CASE("[0, 2^40, 2^40]: a view is made with PyTorch's wrapped strides; a fresh contiguous tensor overflows") {
  // PyTorch's computeStride gives an empty view contiguous strides multiplied without a check (2^80
  // wraps to 0; Note [An empty view's strides wrap]), and the copies that keep a dense tensor's
  // strides keep them; PyTorch 2.8's empty_tensor_restride refuses the same shape made contiguous:
  // empty(), and an op whose output is contiguous.
  constexpr std::int64_t k40 = std::int64_t{1} << 40, k62 = std::int64_t{1} << 62;
  const Tensor v = view(empty_f32({0}), {0, k40, k40});
  CHECK(testing::strides_of(v) == Sizes{0, k40, 1});
  CHECK(testing::strides_of(reshape(empty_f32({0}), {0, k62, 3})) == Sizes{-k62, 3, 1});
  for (const Tensor& copy : {empty_like(v), clone(v), zeros_like(v), to(v, ScalarType::Float64)}) {
    CHECK(sizes_of(copy) == Sizes{0, k40, k40});
    CHECK(testing::strides_of(copy) == Sizes{0, k40, 1});
  }
  CHECK_THROWS_WITH_AS(empty_f32({0, k40, k40}), "[aten::empty] Stride calculation overflowed", Error);
  CHECK_THROWS_WITH_AS(exp(v), "[aten::exp] Stride calculation overflowed", Error);
}

}  // namespace test_empty_shapes
