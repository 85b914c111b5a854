// tests/ops/test_float8.cpp: the float8_e4m3fn and int8 dtypes: every float8 byte to float and back,
// float32 to float8 rounding (ties, overflow to NaN, subnormals) against
// tests/golden/float8_e4m3fn.json (scripts/reference/float8_reference.py, from the format's
// definition: torch 1.13 has no float8), the ops that move them, the ones that refuse, promotion.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "nn/safetensors.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_float8 {  // Note [Test files in unity builds]

using namespace strata;

namespace {

float bits_to_float(std::uint32_t b) { return std::bit_cast<float>(b); }

constexpr ScalarType kF8 = ScalarType::Float8_e4m3fn;

}  // namespace

TEST_CASE("float8_e4m3fn: every byte decodes to the format's value and encodes back") {
  const nlohmann::json golden = testing::read_golden_json("float8_e4m3fn.json");
  REQUIRE(golden["decode"].size() == 256);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    const float f = float8_e4m3fn_to_float(byte);
    const nlohmann::json& expected = golden["decode"][static_cast<std::size_t>(b)];
    CAPTURE(b);
    if (expected.is_null()) {
      CHECK(std::isnan(f));
      CHECK(std::signbit(f) == (b >= 0x80));
      CHECK(float8_e4m3fn_from_float(f) == byte);  // NaN keeps its sign: 0x7F or 0xFF
    } else {
      CHECK(f == expected.get<double>());
      CHECK(std::signbit(f) == (b >= 0x80));  // 0x80 is -0.0
      CHECK(float8_e4m3fn_from_float(f) == byte);
    }
  }
  CHECK(float8_e4m3fn_to_float(0x7E) == 448.0f);
  CHECK(float8_e4m3fn_to_float(0x01) == 0x1p-9f);
  CHECK(float8_e4m3fn_to_float(0x08) == 0x1p-6f);
}

TEST_CASE("float8_e4m3fn: float32 rounds to nearest even; overflow, inf and NaN give NaN") {
  const nlohmann::json golden = testing::read_golden_json("float8_e4m3fn.json");
  REQUIRE(golden["encode"].size() > 1000);
  int checked = 0;
  for (const auto& c : golden["encode"]) {
    const auto bits = static_cast<std::uint32_t>(std::stoul(c[0].get<std::string>(), nullptr, 16));
    const int expected = c[1].get<int>();
    CAPTURE(c[0].get<std::string>());
    CHECK(int(float8_e4m3fn_from_float(bits_to_float(bits))) == expected);
    ++checked;
  }
  CHECK(checked == static_cast<int>(golden["encode"].size()));
  // The cases the golden spells out, by hand: ties to even, the NaN threshold, subnormals.
  CHECK(float8_e4m3fn_from_float(464.0f) == 0x7E);                   // tie 448/480: even mantissa, 448
  CHECK(float8_e4m3fn_from_float(std::nextafter(464.0f, 500.0f)) == 0x7F);  // rounds to 480: NaN
  CHECK(float8_e4m3fn_from_float(449.0f) == 0x7E);                   // not saturated, but rounds down
  CHECK(float8_e4m3fn_from_float(-1e6f) == 0xFF);
  CHECK(float8_e4m3fn_from_float(INFINITY) == 0x7F);
  CHECK(float8_e4m3fn_from_float(1.0625f) == 0x38);                  // tie 1/1.125: even, 1
  CHECK(float8_e4m3fn_from_float(1.1875f) == 0x3A);                  // tie 1.125/1.25: even, 1.25
  CHECK(float8_e4m3fn_from_float(0x1p-10f) == 0x00);                 // tie 0/2^-9: zero
  CHECK(float8_e4m3fn_from_float(0x3p-10f) == 0x02);                 // tie 2^-9/2^-8: even, 2^-8
  CHECK(float8_e4m3fn_from_float(0x1.1p-10f) == 0x01);
  CHECK(float8_e4m3fn_from_float(0x1.Ep-7f) == 0x08);                // 15 * 2^-10 rounds up to 2^-6
  CHECK(float8_e4m3fn_from_float(-0.0f) == 0x80);
  CHECK(float8_e4m3fn_from_float(1e-45f) == 0x00);
}

TEST_CASE("float8_e4m3fn tensors: to, copy_, clone, views, fill, item, printing") {
  const Tensor x = tensor({0.3f, -1.0f, 448.0f, 500.0f, 0x1p-9f, -0.0f}, {2, 3});
  const Tensor q = x.to(kF8);
  CHECK(q.dtype() == kF8);
  CHECK(element_size(kF8) == 1);
  CHECK(q.impl()->storage()->nbytes() == 6);
  const std::vector<float> back = q.to(ScalarType::Float32).to_vector<float>();
  CHECK(back[0] == 0.3125f);
  CHECK(back[1] == -1.0f);
  CHECK(back[2] == 448.0f);
  CHECK(std::isnan(back[3]));
  CHECK(back[4] == 0x1p-9f);
  CHECK(std::signbit(back[5]));
  // float64 converts through float, as c10 does.
  CHECK(tensor({1.0625000001}).to(kF8).to(ScalarType::Float64).item<double>() == 1.0);
  const std::vector<double> from_int = tensor<std::int64_t>({3, 1000}).to(kF8).to_vector<double>();
  CHECK(from_int[0] == 3.0);
  CHECK(std::isnan(from_int[1]));

  const Tensor qt = q.t();
  CHECK(testing::sizes_of(qt) == std::vector<std::int64_t>{3, 2});
  CHECK(qt.dtype() == kF8);
  CHECK(qt.contiguous().to_vector<float>()[4] == 448.0f);  // [2][0] of the transpose is q[0][2]
  CHECK(q.view({3, 2}).to(ScalarType::Float32).to_vector<float>()[2] == 448.0f);
  CHECK(detach(q).dtype() == kF8);
  Tensor c = clone(q);
  CHECK(c.to(ScalarType::Float32).to_vector<float>()[0] == 0.3125f);
  Tensor e = empty({2, 3}, {.dtype = kF8});
  e.copy_(x);
  CHECK(e.to(ScalarType::Float32).to_vector<float>()[1] == -1.0f);
  Tensor f = full({2}, 1000.0, {.dtype = kF8});
  CHECK(std::isnan(f.to_vector<float>()[0]));
  f.fill_(2.75);
  CHECK(f.to_vector<double>() == std::vector<double>{2.75, 2.75});
  CHECK(f.view({1, 2}).select(1, 0).item<double>() == 2.75);
  // Printed as its float values are (PyTorch formats float8 through float), with the dtype.
  std::string as_float = q.to(ScalarType::Float32).str();
  as_float.pop_back();
  CHECK(q.str() == as_float + ", dtype=torch.float8_e4m3fn)");
  CHECK(tensor({1.5f}).to(kF8).str() == "tensor([1.5000], dtype=torch.float8_e4m3fn)");
}

TEST_CASE("float8_e4m3fn: kernels that compute refuse it, naming the op; promotion is refused") {
  const Tensor q = tensor({1.0f, 2.0f}).to(kF8);
  CHECK_THROWS_WITH_AS(add(q, q), "[aten::add] not implemented for 'Float8_e4m3fn'", Error);
  CHECK_THROWS_WITH_AS(mm(q.view({1, 2}), q.view({2, 1})), "[aten::mm] not implemented for 'Float8_e4m3fn'", Error);
  CHECK_THROWS_WITH_AS(exp(q), "[aten::exp] exp not implemented for 'Float8_e4m3fn'", Error);
  CHECK_THROWS_WITH_AS(add(q, tensor({1.0f, 2.0f})), "[aten::add] Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and Float", Error);
  CHECK_THROWS_WITH_AS(cat({q, tensor({1.0f})}), "[aten::cat] Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and Float", Error);
  CHECK(promote_types(kF8, kF8) == kF8);
}

TEST_CASE("int8: promotion, conversions and kernels as in PyTorch") {
  constexpr ScalarType kI8 = ScalarType::Int8;
  CHECK(promote_types(kI8, ScalarType::Float32) == ScalarType::Float32);
  CHECK(promote_types(kI8, ScalarType::Int64) == ScalarType::Int64);
  CHECK(promote_types(kI8, ScalarType::Bool) == kI8);
  // Values from torch 1.13: float to int8 goes through int32, out of range gives 0.
  const Tensor f = tensor({300.0f, -300.0f, 127.9f, 128.0f, -129.0f, 1e10f, NAN, INFINITY});
  CHECK(f.to(kI8).to_vector<std::int64_t>() == std::vector<std::int64_t>{44, -44, 127, -128, 127, 0, 0, 0});
  CHECK(tensor({2147483948.0, 2147483647.0, 1e9 + 44}).to(kI8).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{0, -1, 44});
  CHECK(tensor<std::int64_t>({300, -129}).to(kI8).to_vector<std::int64_t>() == std::vector<std::int64_t>{44, 127});
  const Tensor a = tensor<std::int8_t>({1, 2, 100});
  CHECK(a.dtype() == kI8);
  CHECK((a * 3).to_vector<std::int64_t>() == std::vector<std::int64_t>{3, 6, 44});  // wraps, stays int8
  CHECK((a * 3).dtype() == kI8);
  CHECK(add(a, full({}, 3, {.dtype = ScalarType::Int64})).dtype() == kI8);  // a 0-d int64 does not win
  CHECK(add(a, tensor<std::int64_t>({3, 3, 3})).dtype() == ScalarType::Int64);
  CHECK(sum(a).dtype() == ScalarType::Int64);
  CHECK(sum(a).item<std::int64_t>() == 103);
  CHECK(a.str() == "tensor([  1,   2, 100], dtype=torch.int8)");
  CHECK_THROWS_WITH_AS(full({1}, 300, {.dtype = ScalarType::Int8}), "[aten::full] value cannot be converted to type int8_t without overflow", Error);
}

TEST_CASE("safetensors: F8_E4M3 and I8 save and load byte for byte") {
  const Tensor q = tensor({0.3f, -1.0f, 448.0f, 500.0f}, {2, 2}).to(kF8);
  const Tensor i = tensor<std::int8_t>({-128, 0, 127});
  const std::string bytes = serialize_safetensors({{"q", q.t()}, {"i", i}, {"w", tensor({1.0f})}});
  CHECK(bytes.find("\"dtype\":\"F8_E4M3\"") != std::string::npos);
  CHECK(bytes.find("\"dtype\":\"I8\"") != std::string::npos);
  const SafetensorsFile loaded = load_safetensors_from_bytes(bytes);
  const Tensor lq = loaded.tensors.at("q");
  CHECK(lq.dtype() == kF8);
  CHECK(testing::sizes_of(lq) == std::vector<std::int64_t>{2, 2});
  const std::vector<float> expected = q.t().contiguous().to(ScalarType::Float32).to_vector<float>();
  const std::vector<float> got = lq.to(ScalarType::Float32).to_vector<float>();
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::memcmp(&expected[k], &got[k], 4) == 0);
  CHECK(loaded.tensors.at("i").to_vector<std::int64_t>() == std::vector<std::int64_t>{-128, 0, 127});
}

}  // namespace test_float8
