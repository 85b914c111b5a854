// tests/ops/test_sampling_ops.cpp: exponential_ and multinomial draw the numbers PyTorch draws from a
// generator seeded alike (tests/golden/sampling_ops_torch.json, written by
// scripts/reference/sampling_ops_reference.py): four seeds, several calls in a row on one generator
// (so each call also takes as many numbers from it as PyTorch's does), 1-D and 2-D inputs, one and
// several samples, with and without replacement. The op records (tests/ops/records/random.json)
// check the same ops on the default generator, their errors and their layouts.
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_sampling_ops {  // Note [Test files in unity builds]

using namespace strata;

namespace {
ScalarType dtype_named(const nlohmann::json& name) {
  return name.get<std::string>() == "float64" ? ScalarType::Float64 : ScalarType::Float32;
}
}  // namespace

TEST_CASE("exponential_ and multinomial draw PyTorch's numbers for each seed") {
  const nlohmann::json golden = testing::read_golden_json("sampling_ops_torch.json");
  int exponential_calls = 0, multinomial_calls = 0;
  for (const nlohmann::json& c : golden["cases"]) {
    INFO(c["op"].get<std::string>(), " ", c["name"].get<std::string>(), " seed ", c["seed"].get<int>());
    const auto shape = c["shape"].get<std::vector<std::int64_t>>();
    const ScalarType dtype = dtype_named(c["dtype"]);
    Generator g;
    g.manual_seed(c["seed"].get<std::uint64_t>());
    if (c["op"] == "exponential_") {
      for (const nlohmann::json& expected : c["calls"]) {
        const Tensor t = exponential_(empty(shape, {.dtype = dtype}), c["lambd"].get<double>(), &g);
        // Same transform, same libm: the draws are equal, not just close.
        CHECK(t.to_vector<double>() == expected.get<std::vector<double>>());
        ++exponential_calls;
      }
      continue;
    }
    const auto probs = golden["inputs"][c["name"].get<std::string>()].get<std::vector<double>>();
    const Tensor p = to(tensor<double>(probs, shape), dtype);  // the values are exact in dtype
    for (const nlohmann::json& expected : c["calls"]) {
      const Tensor out = multinomial(p, c["num_samples"].get<std::int64_t>(), c["replacement"].get<bool>(), &g);
      CHECK(out.dtype() == ScalarType::Int64);
      CHECK(testing::sizes_of(out) == c["out_shape"].get<std::vector<std::int64_t>>());
      CHECK(out.to_vector<std::int64_t>() == expected.get<std::vector<std::int64_t>>());
      ++multinomial_calls;
    }
  }
  CHECK(exponential_calls == 24);
  CHECK(multinomial_calls == 108);
}

TEST_CASE("multinomial without a generator draws from the default one") {
  const Tensor p = tensor<float>({0.1f, 0.2f, 0.3f, 0.4f});
  manual_seed(7);
  const auto first = multinomial(p, 3).to_vector<std::int64_t>();
  Generator g;
  g.manual_seed(7);
  CHECK(multinomial(p, 3, false, &g).to_vector<std::int64_t>() == first);
  CHECK(multinomial(p, 3).to_vector<std::int64_t>() != first);  // the default generator moved on
}

TEST_CASE("a row of zeros is refused before any number is drawn") {
  const Tensor p = tensor<float>({{0.5f, 0.5f}, {0.0f, 0.0f}});
  Generator g;
  g.manual_seed(3);
  CHECK_THROWS_WITH_AS(multinomial(p, 1, false, &g),
                       doctest::Contains("invalid multinomial distribution (sum of probabilities <= 0)"), Error);
  Generator fresh;
  fresh.manual_seed(3);
  const Tensor ok = tensor<float>({0.5f, 0.5f, 1.0f});
  CHECK(multinomial(ok, 2, false, &g).to_vector<std::int64_t>() == multinomial(ok, 2, false, &fresh).to_vector<std::int64_t>());
}

}  // namespace test_sampling_ops
