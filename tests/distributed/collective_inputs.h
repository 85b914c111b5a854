// tests/distributed/collective_inputs.h: what the collective tests of both backends share: each rank's
// input values, small dyadic numbers whose sums, products and averages are exact in float32, so the
// single-process references can be computed in double and compared exactly.
#pragma once

#include <string>
#include <vector>

#include "distributed/functional_collectives.h"
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

// Each collective once on `group`, issued by `rank` of `world` (world a power of 2: avg is exact):
// all_reduce (avg), all_gather_into_tensor, reduce_scatter_tensor (sum), all_to_all_single (equal
// splits) and broadcast (from the last rank). Their outputs, not waited for.
inline std::vector<Tensor> issue_each_collective(int rank, int world, const std::string& group) {
  using namespace distributed;
  return {all_reduce(input_of(rank, {3, 5}), "avg", group), all_gather_into_tensor(input_of(rank, {3, 2}), world, group),
          reduce_scatter_tensor(input_of(rank, {2 * world, 2}), "sum", world, group),
          all_to_all_single(input_of(rank, {world, 3}), {}, {}, group), broadcast(input_of(rank, {4}), world - 1, group)};
}
// What issue_each_collective's outputs hold on `rank` once waited for.
inline std::vector<Tensor> each_collective_expected(int rank, int world) {
  std::vector<Tensor> gathered, exchanged;
  Tensor summed = input_of(0, {2 * world, 2});
  for (int r = 0; r < world; ++r) {
    gathered.push_back(input_of(r, {3, 2}));
    exchanged.push_back(narrow(input_of(r, {world, 3}), 0, rank, 1));
    if (r > 0) summed = add(summed, input_of(r, {2 * world, 2}));
  }
  return {to(tensor(reduced("avg", world, 15), {3, 5}), ScalarType::Float32), cat(gathered, 0), narrow(summed, 0, 2 * rank, 2), cat(exchanged, 0),
          input_of(world - 1, {4})};
}

}  // namespace strata::testing
