// tests/ops/test_random.cpp: strata's random numbers equal PyTorch's for the same seed (to 1e-6):
// randn on both paths (fewer than 16 elements and 16+), the cached normal sample across calls, rand,
// normal_, uniform_, randint (32- and 64-bit ranges), explicit generators, and the batch, labels and
// initial parameters of the reference training runs.
#include "nn/layers.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_random {  // Note [Test files in unity builds]

using namespace strata;
using testing::max_abs_diff;

namespace {
void check_case(const nlohmann::json& cases, const std::string& name, const Tensor& t) {
  INFO(name);
  const auto& c = cases.at(name);
  CHECK(testing::sizes_of(t) == c["shape"].get<std::vector<std::int64_t>>());
  CHECK(max_abs_diff(t, c["values"].get<std::vector<double>>()) <= 1e-6);
}
}  // namespace

TEST_CASE("the default generator's distributions match PyTorch's") {
  const nlohmann::json cases = testing::read_golden_json("rng_cases.json");
  manual_seed(5);
  check_case(cases, "randn_3_first", randn({3}));
  check_case(cases, "randn_3_second", randn({3}));
  check_case(cases, "randn_20", randn({20}));
  check_case(cases, "randn_f64_17", randn({17}, {.dtype = ScalarType::Float64}));
  check_case(cases, "rand_7", rand({7}));
  check_case(cases, "rand_f64_5", rand({5}, {.dtype = ScalarType::Float64}));
  check_case(cases, "normal_5", normal_(empty({5}), 1.0, 2.0));
  check_case(cases, "normal_32", normal_(empty({4, 8}), -1.0, 0.5));
  check_case(cases, "uniform_f64_6", uniform_(empty({6}, {.dtype = ScalarType::Float64}), -2.0, 3.0));
  const Tensor r = randint(-5, 5, {10});
  CHECK(r.dtype() == ScalarType::Int64);
  check_case(cases, "randint_10", r);
  check_case(cases, "randint_big_range", randint(0, std::int64_t{1} << 40, {4}));
}

TEST_CASE("an explicit generator has its own stream") {
  const nlohmann::json cases = testing::read_golden_json("rng_cases.json");
  Generator g;
  g.manual_seed(123);
  manual_seed(999);  // the default generator must not interfere
  check_case(cases, "gen_randn_2x9", randn({2, 9}, {}, &g));
  check_case(cases, "gen_rand_4", rand({4}, {}, &g));
  check_case(cases, "gen_randint_6", randint(0, 3, {6}, {}, &g));
}

// randint(high) and randint(high, generator) have no front-end function (composites call the .low
// overloads): by definition they are randint(0, high), and draw the same stream.
TEST_CASE("randint with only a high bound is randint from 0") {
  const std::vector<std::int64_t> size{12};
  auto call = [&](const char* overload, std::vector<IValue> args) {
    Stack stack;
    for (IValue& v : args) stack.push_back(std::move(v));
    ops::op("aten::randint", overload).call(stack);
    return stack.back().to_tensor();
  };
  manual_seed(3);
  const Tensor high_only = call("", {IValue(std::int64_t{7}), IValue(IntArrayRef(size)), IValue(), IValue(), IValue(), IValue()});
  manual_seed(3);
  const Tensor from_zero = randint(0, 7, size);
  CHECK(high_only.dtype() == ScalarType::Int64);
  CHECK(high_only.to_vector<std::int64_t>() == from_zero.to_vector<std::int64_t>());
  Generator g, h;
  g.manual_seed(4);
  h.manual_seed(4);
  const Tensor with_generator = call("generator", {IValue(std::int64_t{7}), IValue(IntArrayRef(size)), IValue(g.impl_ptr()),
                                                   IValue(), IValue(), IValue(), IValue()});
  CHECK(with_generator.to_vector<std::int64_t>() == randint(0, 7, size, {}, &h).to_vector<std::int64_t>());
}

TEST_CASE("batches, labels and nn.Linear's initial parameters match the reference runs") {
  for (const char* file : {"numerics_seed0_16-32-4_b8.json", "numerics_seed1_16-32-4_b8.json",
                           "numerics_seed3_5-7_b1.json", "numerics_seed2_8-16-16-3_b5.json"}) {
    INFO(file);
    const nlohmann::json ref = testing::read_golden_json(file);
    const std::vector<std::int64_t> sizes = ref["sizes"];
    const std::int64_t batch = ref["batch"];
    manual_seed(ref["seed"].get<std::uint64_t>());
    auto model = nn::make_mlp(sizes);
    Generator g;
    g.manual_seed(ref["seed"].get<std::uint64_t>() + 1);
    const Tensor x = randn({batch, sizes.front()}, {}, &g);
    const Tensor y = randint(0, sizes.back(), {batch}, {}, &g);
    CHECK(max_abs_diff(x, ref["x"].get<std::vector<double>>()) <= 1e-6);
    CHECK(y.to_vector<std::int64_t>() == ref["y"].get<std::vector<std::int64_t>>());
    const auto params = model->parameters();
    REQUIRE(params.size() == ref["init_params"].size());
    for (std::size_t i = 0; i < params.size(); ++i)
      CHECK(max_abs_diff(params[i], ref["init_params"][i].get<std::vector<double>>()) <= 1e-6);
  }
}

TEST_CASE("random ops on meta tensors draw nothing") {
  manual_seed(5);
  const Tensor m = randn({1000}, {.device = Device::Meta});
  CHECK(m.is_meta());
  uniform_(m);
  const nlohmann::json cases = testing::read_golden_json("rng_cases.json");
  check_case(cases, "randn_3_first", randn({3}));
}

}  // namespace test_random
