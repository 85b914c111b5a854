// tests/golden_products.h: how the composite-product tests (matmul, einsum) check a case of their
// golden: the ops a mode sees, the output, and the backward of the scripts' weighted loss
// sum(y * arange(1, numel + 1)), its ops and the operands' gradients.
#pragma once

#include <string>
#include <vector>

#include "tests/test_helpers.h"

namespace strata::testing {

inline void check_golden_values(const Tensor& t, const nlohmann::json& expected) {
  const std::vector<double> got = contiguous(t).to_vector<double>();
  const std::vector<double> want = expected.get<std::vector<double>>();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

// One golden case of a product: run() under a logging mode gives c["forward"]'s ops and an output
// of c's sizes, strides and values; then, when c has gradients, the backward of the weighted loss
// gives c["backward"]'s ops (when c has them) and each operand's gradient (null: none).
template <typename Run>
void check_golden_product(const nlohmann::json& c, const std::vector<Tensor>& xs, const Run& run) {
  Tensor y;
  check_same_ops(ops_seen([&] { y = run(); }), c["forward"].get<std::vector<std::string>>());
  CHECK(sizes_of(y) == c["sizes"].get<std::vector<std::int64_t>>());
  CHECK(strides_of(y) == c["strides"].get<std::vector<std::int64_t>>());
  check_golden_values(y, c["values"]);
  if (!c.contains("grads")) {
    CHECK(!y.requires_grad());
    return;
  }
  const Tensor loss = sum(mul(y, view(arange(1.0, static_cast<double>(y.numel()) + 1), y.sizes())));
  const std::vector<std::string> backward_ops = ops_seen([&] { backward(loss); });
  if (c.contains("backward")) check_same_ops(backward_ops, c["backward"].get<std::vector<std::string>>());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (c["grads"][k].is_null()) {
      CHECK(!xs[k].grad().defined());
      continue;
    }
    REQUIRE(xs[k].grad().defined());
    check_golden_values(xs[k].grad(), c["grads"][k]);
  }
}

}  // namespace strata::testing
