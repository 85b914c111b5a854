// tests/ops/test_conversions.cpp: element reads and conversions that plain C++ leaves undefined.
// Bool bytes other than 0/1 read as true (Note [Bool elements are loaded as bytes]); floating values
// int64 cannot hold convert to INT64_MIN, as PyTorch's CPU kernels give on x86, and sum(dtype=int64)
// converts each element first (Note [Float to integer conversion saturates to INT64_MIN];
// tests/golden/conversions_torch.json, from scripts/reference/conversions_reference.py).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "core/tensor_format.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_conversions {  // Note [Test files in unity builds]

using namespace strata;

namespace {

// A bool tensor whose bytes are exactly `bytes` (as uninitialised or external memory may hold).
Tensor bool_bytes(const std::vector<unsigned char>& bytes) {
  Tensor t = strata::empty({static_cast<std::int64_t>(bytes.size())}, {.dtype = ScalarType::Bool});
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

double golden_double(const nlohmann::json& v) { return v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>(); }

// A tensor of `dtype` holding the golden values (already rounded to that dtype by PyTorch).
Tensor floats(const nlohmann::json& values, const std::string& dtype) {
  std::vector<double> v;
  for (const auto& x : values) v.push_back(golden_double(x));
  if (dtype == "float64") return tensor<double>(v);
  return tensor<float>(std::vector<float>(v.begin(), v.end()));
}

}  // namespace

TEST_CASE("bool elements whose byte is not 0 or 1 read as true everywhere") {
  const Tensor b = bool_bytes({0, 1, 2, 190, 255, 0});
  const std::vector<bool> expected{false, true, true, true, true, false};
  CHECK(b.to_vector<bool>() == expected);
  CHECK(b.to_vector<double>() == std::vector<double>{0, 1, 1, 1, 1, 0});
  CHECK(b.to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 1, 1, 1, 0});
  CHECK(b.str() == "tensor([False,  True,  True,  True,  True, False])");
  CHECK(as_strided(b, {}, {}, 3).item().to_bool());
  CHECK(as_strided(b, {}, {}, 3).item<std::int64_t>() == 1);
  // Kernels: conversion, reduction, pointwise (contiguous and strided), in-place.
  CHECK(to(b, ScalarType::Int64).to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 1, 1, 1, 0});
  CHECK(to(b, ScalarType::Float32).to_vector<float>() == std::vector<float>{0, 1, 1, 1, 1, 0});
  CHECK(sum(b).item<std::int64_t>() == 4);
  CHECK(sum(b, {0}, false, ScalarType::Bool).item().to_bool());
  CHECK(add(b, b).to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 1, 1, 1, 0});
  CHECK(mul(b, b).to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 1, 1, 1, 0});
  CHECK(mul(as_strided(b, {3}, {2}, 0), as_strided(b, {3}, {2}, 1)).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{0, 1, 0});
  CHECK(add(b, ones_like(b, {.dtype = ScalarType::Int64})).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{1, 2, 2, 2, 2, 1});
  const Tensor f = zeros_like(b, {.dtype = ScalarType::Float64});
  copy_(f, b);
  CHECK(f.to_vector<double>() == std::vector<double>{0, 1, 1, 1, 1, 0});
  const Tensor sink = zeros_like(b);
  add_(sink, b);
  CHECK(sink.to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 1, 1, 1, 0});
}

TEST_CASE("bool elements in memory strata did not write read as true") {
  static unsigned char external[4] = {7, 0, 128, 1};
  auto storage = StorageImpl::wrap(external, sizeof external, [](void*, void*) {}, nullptr);
  const Tensor b(IntrusivePtr<TensorImpl>::make(Storage(std::move(storage)), 0, DimVector{4}, DimVector{1}, ScalarType::Bool,
                                                Device::CPU));
  CHECK(b.str() == "tensor([ True, False,  True,  True])");
  CHECK(sum(b).item<std::int64_t>() == 3);
  CHECK(to(b, ScalarType::Float64).to_vector<double>() == std::vector<double>{1, 0, 1, 1});
}

TEST_CASE("an uninitialised bool tensor reads and prints without undefined behaviour") {
  // Its contents are unspecified; what is pinned is that reading them is defined (UBSan checks it).
  const Tensor b = strata::empty({64}, {.dtype = ScalarType::Bool});
  const std::string text = b.str();
  CHECK(text.rfind("tensor([", 0) == 0);
  CHECK(sum(b).item<std::int64_t>() >= 0);
  CHECK(b.to_vector<bool>().size() == 64);
}

TEST_CASE("floating to int64 and bool converts as PyTorch does") {
  const nlohmann::json golden = testing::read_golden_json("conversions_torch.json");
  for (const auto& c : golden["casts"]) {
    const std::string dtype = c["dtype"];
    INFO(dtype);
    const Tensor x = floats(c["values"], dtype);
    const std::vector<std::int64_t> ints = c["int64"];
    const std::vector<bool> bools = c["bool"];
    CHECK(to(x, ScalarType::Int64).to_vector<std::int64_t>() == ints);  // _to_copy
    const Tensor dst = zeros_like(x, {.dtype = ScalarType::Int64});
    copy_(dst, x);
    CHECK(dst.to_vector<std::int64_t>() == ints);
    const Tensor strided_dst = as_strided(zeros_like(strata::empty({2 * x.numel()}, {.dtype = ScalarType::Int64})), x.sizes(), {2}, 0);
    copy_(strided_dst, x);  // the strided loop
    CHECK(strided_dst.to_vector<std::int64_t>() == ints);
    CHECK(x.to_vector<std::int64_t>() == ints);
    CHECK(to(x, ScalarType::Bool).to_vector<bool>() == bools);
    CHECK(x.to_vector<bool>() == bools);
  }
  for (const auto& c : golden["sums"]) {
    const std::string dtype = c["dtype"];
    INFO(dtype << " " << c["values"].dump());
    const Tensor x = floats(c["values"], dtype);
    CHECK(sum(x, ScalarType::Int64).item<std::int64_t>() == c["sum_int64"].get<std::int64_t>());
    CHECK(sum(x, {0}, false, ScalarType::Int64).item<std::int64_t>() == c["sum_dim0_int64"].get<std::int64_t>());
    CHECK(sum(x, ScalarType::Bool).item().to_bool() == c["sum_bool"].get<bool>());
  }
}

}  // namespace test_conversions
