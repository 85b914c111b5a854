// tests/modes/test_flop_counter_bmm.cpp: FlopCounterMode on the batched products, with the numbers of
// upstream's test/test_flop_counter.py (test_op's bmm and baddbmm, test_backward), and matmul, which
// is counted through the bmm or mm it runs.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "modes/flop_counter.h"
#include "nn/functional.h"
#include "ops/functions.h"

namespace test_flop_counter_bmm {  // Note [Test files in unity builds]

using namespace strata;
using strata::tracer::FlopCounterMode;

namespace {
Tensor T(IntArrayRef shape, bool requires_grad = false) {
  Tensor t = randn(shape);
  if (requires_grad) requires_grad_(t);
  return t;
}
}  // namespace

TEST_CASE("upstream's test_op: bmm and baddbmm count 3 * 4 * 6 * 2 * 5 = 720; a bias adds nothing") {
  FlopCounterMode bmm_mode;
  {
    ModeGuard guard(bmm_mode);
    (void)bmm(T({3, 4, 5}), T({3, 5, 6}));
  }
  CHECK(bmm_mode.get_total_flops() == 720);
  FlopCounterMode baddbmm_mode;
  {
    ModeGuard guard(baddbmm_mode);
    (void)baddbmm(T({3, 4, 6}), T({3, 4, 5}), T({3, 5, 6}));
  }
  CHECK(baddbmm_mode.get_total_flops() == 720);
  CHECK(baddbmm_mode.get_flop_counts() ==
        std::vector<std::pair<std::string, FlopCounterMode::OpCounts>>{{"Global", {{"aten.baddbmm", 720}}}});
}

TEST_CASE("upstream's test_backward: mm, expand, bmm and their backward count 5184") {
  FlopCounterMode mode;
  {
    ModeGuard guard(mode);
    Tensor a = T({4, 5}, true);
    a = mm(a, T({5, 6}));
    a = expand(unsqueeze(a, 0), {7, 4, 6});
    a = bmm(a, T({7, 6, 7}));
    backward(sum(a));
  }
  CHECK(mode.get_total_flops() == 5184);
}

TEST_CASE("matmul is counted through what it runs: bmm for batched operands, mm for a folded one") {
  FlopCounterMode mode;
  {
    ModeGuard guard(mode);
    (void)nn::functional::matmul(T({2, 3, 4}), T({2, 4, 5}));  // bmm: 2 * 3 * 5 * 2 * 4 = 240
    (void)nn::functional::matmul(T({2, 3, 4}), T({4, 5}));     // mm on [6, 4]: 240
    (void)nn::functional::matmul(T({5, 6}), T({6, 7}));        // upstream's test_flop_counter_variety: 420
  }
  CHECK(mode.get_flop_counts() == std::vector<std::pair<std::string, FlopCounterMode::OpCounts>>{
                                      {"Global", {{"aten.bmm", 240}, {"aten.mm", 660}}}});
}

}  // namespace test_flop_counter_bmm
