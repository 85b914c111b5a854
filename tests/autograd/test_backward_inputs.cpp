// tests/autograd/test_backward_inputs.cpp: backward with inputs (PyTorch 2.8 test_autograd.py's
// test_backward_with_inputs and test_backward_with_nonleaf_inputs), the LibTorch spellings of the
// autograd entry points (loss.backward(...), x.requires_grad_(), strata::NoGradGuard), and the warning
// LibTorch gives on reading .grad of a non-leaf; a pruned pass through CopySlices.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/util/warning.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_backward_inputs {  // Note [Test files in unity builds]

using namespace strata;

namespace {

using V = std::vector<Tensor>;

Tensor leaf(std::initializer_list<double> values) {
  Tensor t = tensor<double>(values, {2, 2});
  requires_grad_(t);
  return t;
}

void check_equal(const Tensor& got, const Tensor& expected) {
  REQUIRE(got.defined());
  CHECK(testing::max_abs_diff(got, expected.to_vector<double>()) <= 1e-12);
}

struct Collector : WarningHandler {
  std::vector<std::string> messages;
  void process(const Warning& w) override { messages.push_back(w.msg()); }
};

const char* const kNonLeafGrad =
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated "
    "during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use "
    ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf "
    "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.";

}  // namespace

TEST_CASE("backward with inputs accumulates into those inputs only (test_backward_with_inputs)") {
  const Tensor x = leaf({1, -2, 0.5, 3});
  const Tensor y = leaf({2, 1, -1, 0.25});
  // x**2 + y * x + y**2
  const auto fn = [&] { return add(add(mul(x, x), mul(y, x)), mul(y, y)); };
  const Tensor gradient = ones_like(x);
  const Tensor x_expected = add(mul(x, 2), y).detach();
  const Tensor y_expected = add(x, mul(y, 2)).detach();
  backward(V{fn()}, V{gradient}, std::nullopt, false, V{x, y});
  check_equal(x.grad(), x_expected);
  check_equal(y.grad(), y_expected);
  {
    NoGradGuard no_grad;  // the top-level spelling (LibTorch's torch::NoGradGuard)
    zero_(x.grad());
    zero_(y.grad());
  }
  backward(V{fn()}, V{gradient}, std::nullopt, false, V{x});
  check_equal(x.grad(), x_expected);
  check_equal(y.grad(), zeros_like(y));
  {
    NoGradGuard no_grad;
    zero_(x.grad());
  }
  fn().backward(gradient, std::nullopt, false, V{y});
  check_equal(x.grad(), zeros_like(x));
  check_equal(y.grad(), y_expected);
  CHECK_THROWS_WITH_AS(fn().backward(gradient, std::nullopt, false, V{}),
                       "'inputs' argument to backward cannot be empty", Error);
  // PyTorch retains the grad of each input first, so an input that needs none fails there.
  CHECK_THROWS_WITH_AS(backward(V{fn()}, V{gradient}, std::nullopt, false, V{ones_like(x)}),
                       "can't retain_grad on Tensor that has requires_grad=False", Error);
}

TEST_CASE("backward with a non-leaf input retains its grad; an input off the graph gets none") {
  const Tensor x = leaf({1, -2, 0.5, 3});
  const Tensor x_nonleaf = mul(x, 1);
  const Tensor y = leaf({2, 1, -1, 0.25});
  const Tensor z = leaf({0, 0, 0, 0});
  const Tensor out = add(add(mul(x_nonleaf, x_nonleaf), mul(y, x_nonleaf)), mul(y, y));
  out.backward(ones_like(out), std::nullopt, true, V{x, y, x_nonleaf});
  check_equal(y.grad(), add(x, mul(y, 2)).detach());
  check_equal(x.grad(), add(mul(x, 2), y).detach());
  check_equal(x_nonleaf.grad(), add(mul(x_nonleaf, 2), y).detach());
  CHECK(retains_grad(x_nonleaf));
  out.backward(ones_like(out), std::nullopt, true, V{z});
  CHECK_FALSE(z.grad().defined());
  for (const Tensor& t : {x, y, x_nonleaf}) set_grad(t, Tensor());  // create_graph's leaf <-> grad cycles
}

TEST_CASE("LibTorch's spellings: loss.backward(), x.requires_grad_()") {
  Tensor x = tensor<float>({1, 2, 3});
  CHECK(&x.requires_grad_() == &x);
  CHECK(x.requires_grad());
  const Tensor loss = sum(mul(x, x));
  loss.backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  x.requires_grad_(false);
  CHECK_FALSE(x.requires_grad());
  CHECK_THROWS_WITH_AS(mul(leaf({1, 2, 3, 4}), 2).requires_grad_(false),
                       doctest::Contains("you can only change requires_grad flags of leaf variables."), Error);
  const Tensor w = leaf({1, 2, 3, 4});
  const Tensor l2 = sum(mul(w, w));
  l2.backward(Tensor(), /*retain_graph=*/true);
  l2.backward();
  check_equal(w.grad(), mul(w, 4).detach());
}

TEST_CASE("reading .grad of a non-leaf warns in LibTorch's words, unless it retains its grad") {
  Collector warnings;
  const WarningHandlerGuard guard(&warnings);
  const Tensor x = leaf({1, 2, 3, 4});
  const Tensor y = mul(x, 2);
  CHECK_FALSE(y.grad().defined());
  REQUIRE(warnings.messages.size() == 1);
  CHECK(warnings.messages[0] == kNonLeafGrad);
  CHECK_FALSE(x.grad().defined());  // a leaf: no warning
  CHECK_FALSE(tensor<float>({1}).grad().defined());  // a plain tensor: none either
  const Tensor r = mul(x, 3);
  retain_grad(r);
  CHECK_FALSE(r.grad().defined());
  sum(r).backward();
  CHECK(r.grad().defined());
  CHECK(x.grad().defined());
  CHECK(warnings.messages.size() == 1);
}

TEST_CASE("a pass that needs one input computes it through CopySlices (PyTorch's update_exec_info)") {
  // y = x * 1; y.view(2, 2).mul_(w); loss = y.sum(): CopySlices runs its inner MulBackward0, whose edge
  // 0 (the view's old history) lies outside the pass's graph and stands for CopySlices' own edge 0.
  const Tensor x = leaf({1, -2, 0.5, 3});
  const Tensor w = leaf({2, 1, -1, 0.25});
  const auto loss = [&] {
    const Tensor y = mul(view(x, {4}), 1);
    mul_(view(y, {2, 2}), w);
    return sum(y);
  };
  check_equal(autograd::grad({loss()}, {x})[0], w.detach());
  check_equal(autograd::grad({loss()}, {w})[0], x.detach());
  loss().backward(Tensor(), std::nullopt, false, V{x});
  check_equal(x.grad(), w.detach());
  CHECK_FALSE(w.grad().defined());
}

}  // namespace test_backward_inputs
