// tests/autograd/test_backward_order.cpp: the ops one backward dispatches, in order, equal PyTorch's
// (tests/golden/backward_order_torch.json, from scripts/reference/backward_order_reference.py).
// They pin the order a node computes its input gradients in (Note [Formulas run in input-name
// order]), the mul.Scalar of maybe_multiply, mm_mat2_backward's layout branch, sum_to, gradient
// accumulation for a leaf used twice, and how AccumulateGrad stores a stolen or a cloned gradient.
#include <functional>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_backward_order {  // Note [Test files in unity builds]

using namespace strata;

namespace {

Tensor leaf(std::vector<float> values, std::initializer_list<std::int64_t> sizes) {
  Tensor t = view(tensor<float>(values), sizes);
  t = detach(t);
  requires_grad_(t);
  return t;
}

Tensor a() { return leaf({1, 2, 3, 4, 5, 6}, {2, 3}); }
Tensor b() { return leaf({2, 1, 4, 3, 6, 5}, {2, 3}); }
Tensor w() { return leaf({0.5f, -1, 2, 1.5f, 0.25f, -0.5f}, {2, 3}); }

std::map<std::string, std::function<Tensor()>> cases() {
  return {
      {"mm_self_and_transposed_mat2", [] { return mm(a(), t(w())); }},
      {"div", [] { return div(a(), b()); }},
      {"mul", [] { return mul(a(), b()); }},
      {"sub_alpha_2", [] { return sub(a(), b(), 2); }},
      {"add_alpha_2_5", [] { return add(a(), b(), 2.5); }},
      {"addmm_beta_2_alpha_3", [] { return addmm(leaf({1, -1}, {2}), a(), t(w()), 2, 3); }},
      {"threshold_backward", [] { return threshold_backward(a(), b(), 2.0); }},
      {"same_leaf_twice", [] {
         const Tensor v = a();
         return mul(v, v);
       }},
  };
}

}  // namespace

TEST_CASE("each backward dispatches PyTorch's ops in PyTorch's order") {
  testing::for_each_golden_case("backward_order_torch.json", cases(), [](const auto& build, const nlohmann::json& torch_ops) {
    const Tensor loss = sum(build());
    testing::check_same_ops(testing::ops_seen([&] { backward(loss); }), torch_ops.get<std::vector<std::string>>());
  });
}

}  // namespace test_backward_order
