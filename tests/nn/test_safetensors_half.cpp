// tests/nn/test_safetensors_half.cpp: F16 and BF16 in safetensors files: a file written from the format
// description (scripts/reference/make_safetensors.py, the crate's layout) loads bit-exact and strata
// writes it byte for byte; round trips keep every bit (NaN, infinities, subnormals); a misaligned
// F16 tensor is copied; the loader checks byte counts in 2-byte elements.
#include <cstring>

#include "nn/safetensors.h"
#include "ops/functions.h"
#include "tests/nn/safetensors_test_helpers.h"
#include "tests/test_helpers.h"

namespace test_safetensors_half {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;

namespace {

Tensor from_bits16(std::initializer_list<std::uint16_t> bits, IntArrayRef sizes, ScalarType dtype) {
  Tensor t = strata::empty(sizes, {.dtype = dtype});
  REQUIRE(static_cast<std::size_t>(t.numel()) == bits.size());
  std::memcpy(t.raw_data(), std::data(bits), bits.size() * 2);
  return t;
}

std::vector<std::uint16_t> bits16(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::uint16_t*>(c.raw_data());
  return std::vector<std::uint16_t>(p, p + c.numel());
}

// The tensors of make_safetensors.py's HALF.
TensorDict half_golden_tensors() {
  return {
      {"h", from_bits16({0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x7E00, 0x0001}, {2, 3}, ScalarType::Float16)},
      {"bf", from_bits16({0x3F80, 0x8000, 0x7F7F, 0x7FC0}, {4}, ScalarType::BFloat16)},
      {"scale", tensor({0.25f}, IntArrayRef{})},
      {"mask", tensor<bool>({true})},
  };
}

}  // namespace

TEST_CASE("safetensors F16 and BF16: a file in the crate's layout loads bit-exact and is written byte for byte") {
  const std::string path = testing::golden_path("safetensors_half.safetensors");
  const SafetensorsFile file = load_safetensors(path);
  const TensorDict expected = half_golden_tensors();
  REQUIRE(file.tensors.size() == expected.size());
  const Tensor& h = file.tensors.at("h");
  const Tensor& bf = file.tensors.at("bf");
  CHECK(h.dtype() == ScalarType::Float16);
  CHECK(bf.dtype() == ScalarType::BFloat16);
  CHECK(testing::sizes_of(h) == std::vector<std::int64_t>{2, 3});
  CHECK(bits16(h) == bits16(expected.at("h")));
  CHECK(bits16(bf) == bits16(expected.at("bf")));
  const std::vector<float> hv = h.to(ScalarType::Float32).to_vector<float>();
  CHECK(hv[0] == 1.0f);
  CHECK(hv[1] == -2.0f);
  CHECK(hv[2] == 65504.0f);
  CHECK(std::isinf(hv[3]));
  CHECK(std::isnan(hv[4]));
  CHECK(hv[5] == 0x1p-24f);
  CHECK(bf.to(ScalarType::Float64).to_vector<double>()[2] == 0x1.FEp127);
  CHECK(file.tensors.at("scale").item<float>() == 0.25f);
  // BF16 sorts before F16 (the crate's Dtype order, descending), after F32.
  CHECK(serialize_safetensors(expected, file.metadata) == read_bytes(path));
}

TEST_CASE("safetensors F16 and BF16: save and load keep every bit, views and expanded tensors included") {
  TempDir dir;
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  Tensor h = strata::empty({256, 256}, {.dtype = ScalarType::Float16});
  std::memcpy(h.raw_data(), all.data(), all.size() * 2);
  const Tensor bf = h.view({65536}).to(ScalarType::Float32).to(ScalarType::BFloat16);
  const Tensor ht = h.t();                                                    // a transposed view
  const Tensor hx = from_bits16({0x3555}, {1}, ScalarType::Float16).expand({3});  // expanded
  save_safetensors(dir.file("all.safetensors"), {{"h", h}, {"bf", bf}, {"ht", ht}, {"hx", hx}});
  const SafetensorsFile back = load_safetensors(dir.file("all.safetensors"));
  CHECK(bits16(back.tensors.at("h")) == all);
  CHECK(bits16(back.tensors.at("bf")) == bits16(bf));
  CHECK(bits16(back.tensors.at("ht")) == bits16(ht));
  CHECK(bits16(back.tensors.at("hx")) == std::vector<std::uint16_t>(3, 0x3555));
  CHECK(back.tensors.at("ht").dtype() == ScalarType::Float16);
  CHECK(back.tensors.at("bf").dtype() == ScalarType::BFloat16);
}

TEST_CASE("safetensors F16: misaligned data is copied; a byte count that is not 2 per element is refused") {
  TempDir dir;
  // A BOOL first, in the given order: the F16 data sits at offset 1.
  const std::string header = R"({"m":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]},)"
                             R"("x":{"dtype":"F16","shape":[2],"data_offsets":[1,5]}})";
  std::string data = "\x01";
  data += std::string("\x00\x3C\x00\xC0", 4);  // 1.0, -2.0
  write_bytes(dir.file("m.safetensors"), file_bytes(header, data));
  const SafetensorsFile file = load_safetensors(dir.file("m.safetensors"));
  CHECK(file.tensors.at("x").to(ScalarType::Float32).to_vector<float>() == std::vector<float>{1.0f, -2.0f});

  const std::string bad = R"({"x":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}})";
  write_bytes(dir.file("bad.safetensors"), file_bytes(bad, std::string(4, '\0')));
  CHECK_THROWS_AS(load_safetensors(dir.file("bad.safetensors")), Error);
}

}  // namespace test_safetensors_half
