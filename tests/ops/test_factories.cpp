// tests/ops/test_factories.cpp: zeros, ones, full, arange against PyTorch
// (tests/golden/factories_torch.json, from scripts/reference/factories_reference.py): dtype
// inference, lengths, values and errors; and from_blob over memory the test owns.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_factories {  // Note [Test files in unity builds]

using namespace strata;
using nlohmann::json;
using testing::sizes_of;
using testing::strides_of;

namespace {

std::optional<ScalarType> dtype_named(const json& j) {
  if (j.is_null()) return std::nullopt;
  const std::string name = j;
  if (name == "float32") return ScalarType::Float32;
  if (name == "float64") return ScalarType::Float64;
  if (name == "int64") return ScalarType::Int64;
  REQUIRE(name == "bool");
  return ScalarType::Bool;
}

Scalar scalar_of(const json& j) {
  if (j.is_boolean()) return Scalar(j.get<bool>());
  if (j.is_string()) return Scalar(std::stod(j.get<std::string>()));  // "inf", "nan"
  if (j.is_number_integer()) return Scalar(j.get<std::int64_t>());
  return Scalar(j.get<double>());
}

Tensor arange_of(const json& args, const TensorOptions& options) {
  if (args.size() == 1) return arange(scalar_of(args[0]), options);
  if (args.size() == 2) return arange(scalar_of(args[0]), scalar_of(args[1]), options);
  return arange(scalar_of(args[0]), scalar_of(args[1]), scalar_of(args[2]), options);
}

}  // namespace

TEST_CASE("zeros, ones, full, arange: PyTorch's dtypes, lengths and values") {
  const json golden = testing::read_golden_json("factories_torch.json");
  for (const json& c : golden["arange"]) {
    INFO(c.dump());
    const TensorOptions options{.dtype = dtype_named(c["dtype"])};
    if (c.contains("error")) {
      CHECK_THROWS_WITH_AS(arange_of(c["args"], options), ("[aten::arange] " + c["error"].get<std::string>()).c_str(), Error);
      const TensorOptions meta{.dtype = options.dtype, .device = Device::Meta};
      CHECK_THROWS_WITH_AS(arange_of(c["args"], meta), ("[aten::arange] " + c["error"].get<std::string>()).c_str(), Error);
      continue;
    }
    const Tensor r = arange_of(c["args"], options);
    CHECK(r.dtype() == *dtype_named(c["result_dtype"]));
    CHECK(r.to_vector<double>() == c["values"].get<std::vector<double>>());
    const Tensor m = arange_of(c["args"], {.dtype = options.dtype, .device = Device::Meta});
    CHECK(m.is_meta());
    CHECK(sizes_of(m) == sizes_of(r));
    CHECK(m.dtype() == r.dtype());
  }
  for (const json& c : golden["full"]) {
    INFO(c.dump());
    const Tensor r = full({2}, scalar_of(c["value"]));
    CHECK(r.dtype() == *dtype_named(c["dtype"]));
    CHECK(r.to_vector<double>() == c["values"].get<std::vector<double>>());
  }
  CHECK(full({2, 2}, 7, {.dtype = ScalarType::Float64}).to_vector<double>() == std::vector<double>(4, 7.0));
  CHECK(full({0, 3}, 1.5).numel() == 0);
  CHECK(sizes_of(full({2, 3}, 1, {.device = Device::Meta})) == std::vector<std::int64_t>{2, 3});
  const Tensor z = zeros({2, 3});
  CHECK(z.dtype() == ScalarType::Float32);
  CHECK(z.to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(zeros({3}, {.dtype = ScalarType::Bool}).to_vector<bool>() == std::vector<bool>(3, false));
  CHECK(ones({2}, {.dtype = ScalarType::Int64}).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1});
  CHECK(ones({}).to_vector<float>() == std::vector<float>{1.0f});
  CHECK(ones({2, 2}, {.device = Device::Meta}).is_meta());
  CHECK_FALSE(ones({2}).requires_grad());
  // Errors: negative sizes, an integer fill that does not fit, a range too long for int64.
  CHECK_THROWS_WITH_AS(zeros({2, -1}), "[aten::zeros] Trying to create tensor with negative dimension -1: [2, -1]", Error);
  CHECK_THROWS_WITH_AS(full({2}, 1e30, {.dtype = ScalarType::Int64}),
                       "[aten::full] value cannot be converted to type int64_t without overflow", Error);
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK_THROWS_WITH_AS(arange(lo, hi), "[aten::arange] invalid size, possible overflow?", Error);
  CHECK_THROWS_WITH_AS(arange(0.0, 1e300, 1e-300), "[aten::arange] invalid size, possible overflow?", Error);
  // Exactly 2^63 elements (found by the api fuzzer: the length's cast to int64 overflowed).
  CHECK_THROWS_WITH_AS(arange(lo, std::int64_t{0}), "[aten::arange] invalid size, possible overflow?", Error);
  CHECK_THROWS_WITH_AS(arange(0.0, 0x1p63), "[aten::arange] invalid size, possible overflow?", Error);
  CHECK(sizes_of(arange(lo, hi, hi, {.device = Device::Meta})) == std::vector<std::int64_t>{3});
  CHECK(arange(lo, hi, hi).to_vector<std::int64_t>() == std::vector<std::int64_t>{lo, -1, hi - 1});
}

TEST_CASE("from_blob wraps memory the caller owns, without a copy and without freeing it") {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  {
    const Tensor x = from_blob(data.data(), {2, 3});
    CHECK(x.dtype() == ScalarType::Float32);
    CHECK(strides_of(x) == std::vector<std::int64_t>{3, 1});
    CHECK(x.data_ptr<float>() == data.data());
    CHECK(x.to_vector<float>() == data);
    mul_(x, full({1}, 2.0f));  // writes the caller's memory
    CHECK(data == std::vector<float>{2, 4, 6, 8, 10, 12});
    const Tensor col = from_blob(data.data(), {2}, {3}, {.dtype = ScalarType::Float32});
    CHECK(col.to_vector<float>() == std::vector<float>{2, 8});
    CHECK(sum(t(x)).item<float>() == 42.0f);
    Tensor p = from_blob(data.data(), {6});
    requires_grad_(p);
    backward(sum(mul(p, p)));
    CHECK(p.grad().to_vector<float>() == std::vector<float>{4, 8, 12, 16, 20, 24});
  }
  data[0] = 7;  // still the caller's after every tensor is gone (ASan would see a free)
  std::vector<std::int64_t> ints{5, 6};
  CHECK(from_blob(ints.data(), {2}, {.dtype = ScalarType::Int64}).to_vector<std::int64_t>() == ints);
  CHECK(from_blob(nullptr, {0, 3}).numel() == 0);
  CHECK_THROWS_WITH_AS(from_blob(nullptr, {2}), "[from_blob] from_blob: null data for 8 bytes", Error);
  CHECK_THROWS_WITH_AS(from_blob(data.data(), {2, -1}), "[from_blob] Trying to create tensor with negative dimension -1: [2, -1]",
                       Error);
  CHECK_THROWS_WITH_AS(from_blob(data.data(), {2}, {1, 1}), "[from_blob] from_blob: 1 sizes but 2 strides", Error);
  CHECK_THROWS_AS(from_blob(reinterpret_cast<char*>(data.data()) + 1, {2}), Error);  // misaligned floats
  CHECK_THROWS_AS(from_blob(data.data(), {2}, {.device = Device::Meta}), Error);
}

}  // namespace test_factories
