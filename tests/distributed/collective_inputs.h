// tests/distributed/collective_inputs.h: what the collective tests of both backends share: each rank's
// input values, small dyadic numbers whose sums, products and averages are exact in float32, so the
// single-process references can be computed in double and compared exactly.
#pragma once

#include <string>
#include <vector>

#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace strata::testing {

inline std::vector<double> values_of(int rank, std::int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (rank + 1) * 10.0 + static_cast<double>(i) * ((rank % 2) ? -1.5 : 0.5);
  return v;
}
inline Tensor input_of(int rank, const std::vector<std::int64_t>& sizes, ScalarType dtype = ScalarType::Float32) {
  return to(tensor(values_of(rank, numel_of(sizes)), sizes), dtype);
}
inline bool same(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() && contiguous(a).to_vector<double>() == contiguous(b).to_vector<double>();
}
// The ranks' values reduced in rank order with `op` (sum, avg, product, min, max).
inline std::vector<double> reduced(const std::string& op, int world, std::int64_t n) {
  std::vector<double> expected = values_of(0, n);
  for (int r = 1; r < world; ++r) {
    const std::vector<double> x = values_of(r, n);
    for (std::size_t i = 0; i < x.size(); ++i) {
      double& e = expected[i];
      e = op == "sum" || op == "avg" ? e + x[i] : op == "product" ? e * x[i] : op == "min" ? std::min(e, x[i]) : std::max(e, x[i]);
    }
  }
  if (op == "avg")
    for (double& e : expected) e /= world;
  return expected;
}

}  // namespace strata::testing
