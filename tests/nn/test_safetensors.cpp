// tests/nn/test_safetensors.cpp: save_safetensors / load_safetensors: round trips, in-place loading,
// atomic writing, the crate's byte layout, and an Error naming the file for every kind of bad file.
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "nn/safetensors.h"
#include "ops/functions.h"
#include "tests/nn/safetensors_test_helpers.h"
#include "tests/test_helpers.h"

namespace test_safetensors {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;
namespace fs = std::filesystem;

namespace {

std::string float_bytes(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

// The message load_safetensors gives for a file of `bytes`; fails the test if it loads.
std::string load_error(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("bad.safetensors");
  write_bytes(path, bytes);
  try {
    load_safetensors(path);
  } catch (const Error& e) {
    const std::string message = e.what();
    CHECK(message.find(path) != std::string::npos);
    // The in-memory loader agrees (the fuzz target drives it).
    try {
      load_safetensors_from_bytes(bytes, path);
      FAIL("load_safetensors_from_bytes accepted what load_safetensors refused");
    } catch (const Error& e2) {
      CHECK(std::string(e2.what()) == message);
    }
    return message;
  }
  FAIL("the file loaded");
  return "";
}


}  // namespace

TEST_CASE("save_safetensors and load_safetensors round-trip every dtype, shape and layout") {
  TempDir dir;
  const Tensor f32 = tensor<float>({1.5f, -2.f, 3.25f, 0.f, 1e-30f, -0.f}, {2, 3});
  const Tensor f64 = tensor<double>({1.0 / 3, -1e300});
  const Tensor i64 = tensor<std::int64_t>({std::numeric_limits<std::int64_t>::min(), 7, -1}, {3, 1});
  const Tensor b = tensor<bool>({true, false, true});
  const Tensor scalar = scalar_tensor(4.5, ScalarType::Float32);
  const Tensor empty = strata::empty({0, 3});
  const Tensor transposed = t(f32);  // not contiguous: saved in row-major order of its own shape
  const std::string path = dir.file("all.safetensors");
  save_safetensors(path, {{"f32", f32}, {"f64", f64}, {"i64", i64}, {"b", b}, {"scalar", scalar}, {"empty", empty},
                          {"transposed", transposed}},
                   {{"format", "pt"}, {"note", "h\u00e9llo \"quoted\"\n"}});
  const SafetensorsFile file = load_safetensors(path);
  CHECK(file.metadata == SafetensorsMetadata{{"format", "pt"}, {"note", "h\u00e9llo \"quoted\"\n"}});
  REQUIRE(file.tensors.size() == 7);
  const auto same = [&](const char* name, const Tensor& expected) {
    CAPTURE(name);
    const Tensor& got = file.tensors.at(name);
    CHECK(got.dtype() == expected.dtype());
    CHECK(got.sizes().vec() == expected.sizes().vec());
    CHECK(got.is_contiguous());
    CHECK(got.str() == expected.str());
  };
  same("f32", f32);
  same("f64", f64);
  same("i64", i64);
  same("b", b);
  same("scalar", scalar);
  same("empty", empty);
  same("transposed", transposed);
  // Bit-exact, including -0 and a denormal-range value.
  const std::vector<float> values = file.tensors.at("f32").to_vector<float>();
  CHECK(std::memcmp(values.data(), f32.data_ptr<float>(), 24) == 0);
}

TEST_CASE("load_safetensors uses aligned data in place, keeps the mapping alive and never writes the file") {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  save_safetensors(path, {{"a", tensor<float>({1, 2, 3, 4})}, {"b", tensor<float>({5, 6})}});
  const std::string before = read_bytes(path);
  Tensor b;
  {
    SafetensorsFile file = load_safetensors(path);
    const Tensor& a = file.tensors.at("a");
    b = file.tensors.at("b");
    // Both wrap the one mapping: b's data follows a's in the file, byte for byte.
    CHECK(static_cast<char*>(b.raw_data()) - static_cast<char*>(a.raw_data()) == 16);
    CHECK(a.impl()->storage()->nbytes() == 16);
  }
  fs::remove(path);  // the mapping outlives the name, and the other tensors
  add_(b, b);        // writable: copy-on-write pages
  CHECK(b.to_vector<float>() == std::vector<float>{10, 12});
  write_bytes(path, before);
  CHECK(load_safetensors(path).tensors.at("b").to_vector<float>() == std::vector<float>{5, 6});
}

TEST_CASE("load_safetensors copies misaligned data into aligned storage") {
  TempDir dir;
  // A 2-byte BOOL first puts the F32 data at offset 2 of the (8-byte aligned) data.
  const std::string bytes = file_bytes(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]},)"
                                       R"("f":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}})",
                                       std::string("\x01\x05", 2) + float_bytes({0.5f, -8.f}));
  write_bytes(dir.file("m.safetensors"), bytes);
  const SafetensorsFile file = load_safetensors(dir.file("m.safetensors"));
  const Tensor& f = file.tensors.at("f");
  CHECK(reinterpret_cast<std::uintptr_t>(f.raw_data()) % alignof(float) == 0);
  CHECK(f.to_vector<float>() == std::vector<float>{0.5f, -8.f});
  CHECK(file.tensors.at("m").to_vector<bool>() == std::vector<bool>{true, true});  // any nonzero byte is true
}

TEST_CASE("save_safetensors writes all or nothing") {
  TempDir dir;
  const std::string path = dir.file("keep.safetensors");
  save_safetensors(path, {{"x", tensor<float>({1})}});
  const std::string before = read_bytes(path);
  CHECK_THROWS_WITH_AS(save_safetensors(path, {{"x", tensor<float>({2})}, {"y", Tensor()}}),
                       "save_safetensors: tensor 'y' is undefined", Error);
  CHECK_THROWS_WITH_AS(save_safetensors(path, {{"__metadata__", tensor<float>({2})}}),
                       "save_safetensors: '__metadata__' is reserved and cannot name a tensor", Error);
  CHECK_THROWS_WITH_AS(save_safetensors(path, {{"x", tensor<float>({2})}}, {{"k", std::string("\xff", 1)}}),
                       doctest::Contains("save_safetensors: names and metadata must be valid UTF-8"), Error);
  CHECK(read_bytes(path) == before);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temporary left
  CHECK_THROWS_WITH_AS(save_safetensors(dir.file("no/such/dir.safetensors"), {{"x", tensor<float>({2})}}),
                       doctest::Contains("save_safetensors"), Error);
}

TEST_CASE("save_safetensors lays files out as the safetensors crate does") {
  // Descending dtype alignment (I64, F64, F32, BOOL), then name; metadata first; padded with spaces.
  const std::string bytes = serialize_safetensors(
      {{"b", tensor<float>({1})}, {"a", tensor<bool>({true})}, {"c", tensor<std::int64_t>({2})}, {"d", tensor<double>({3})}},
      {{"k", "v"}});
  const std::string header =
      R"({"__metadata__":{"k":"v"},"c":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
      R"("d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},)"
      R"("a":{"dtype":"BOOL","shape":[1],"data_offsets":[20,21]}})";
  REQUIRE(bytes.size() >= 8 + header.size());
  CHECK(bytes.substr(8, header.size()) == header);
  const std::uint64_t n = (header.size() + 7) / 8 * 8;
  CHECK(bytes.substr(0, 8) == le64(n));
  CHECK(bytes.substr(8 + header.size(), n - header.size()) == std::string(n - header.size(), ' '));
  CHECK(bytes.size() == 8 + n + 21);
}

TEST_CASE("load_safetensors refuses a damaged or hostile file with an Error naming the file and the fault") {
  TempDir dir;
  const std::string ok_entry = R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string data = float_bytes({1, 2});
  // Sanity: the well-formed file these are made from loads.
  write_bytes(dir.file("ok.safetensors"), file_bytes("{" + ok_entry + "}", data));
  CHECK(load_safetensors(dir.file("ok.safetensors")).tensors.size() == 1);

  SUBCASE("shorter than the header length") { CHECK(contains(load_error(dir, "abc"), "3 bytes, too short for the 8-byte header length")); }
  SUBCASE("header length past the end of the file") {
    CHECK(contains(load_error(dir, le64(1000) + "{}"), "the header length 1000 runs past the end of the file (10 bytes)"));
  }
  SUBCASE("a header of several GiB") {
    CHECK(contains(load_error(dir, le64(std::uint64_t{5} << 30) + "{}"), "header length 5368709120 runs past the end"));
    CHECK(contains(load_error(dir, le64(~std::uint64_t{0}) + "{}"), "runs past the end of the file"));
  }
  SUBCASE("a header over the crate's limit, though the file is that long") {
    const std::string path = dir.file("big.safetensors");
    {
      std::ofstream out(path, std::ios::binary);
      out << le64(100'000'008) << "{";
    }
    fs::resize_file(path, 8 + 100'000'008);  // sparse: no disk space
    CHECK_THROWS_WITH_AS(load_safetensors(path), doctest::Contains("exceeds the limit of 100000000 bytes"), Error);
  }
  SUBCASE("a header that is not a safetensors header") {
    // Each: the header, the data after it, and what the error says.
    struct BadFile {
      std::string header, data;
      const char* message;
    };
    const std::vector<BadFile> cases = {
        {"{\"x\":", "", "the header is not valid JSON"},
        {"[1]", "", "does not start with '{'"},
        {"{\"x\":{\"shape\":[[[[[[[[1]]]]]]]]}}", "", "nests deeper"},
        {R"({"x":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", data, "tensor 'x' has unknown dtype \"F33\""},
        {R"({"x":{"dtype":"U16","shape":[4],"data_offsets":[0,8]}})", data,
         "tensor 'x' has dtype U16, which strata does not support (F32, F64, F16, BF16, I64, I8, F8_E4M3, BOOL)"},
        {R"({"x":{"dtype":"F32","shape":[2]}})", data, "tensor 'x' has no data_offsets"},
        {R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data,
         "each size in shape must be an integer from 0 to 2^63-1, got -2"},
        {R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data,
         "is too large: its bytes or strides exceed 2^63-1"},
        // An empty tensor whose strides would overflow (found by the fuzz target's invariants).
        {R"({"e":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})", "",
         "tensor 'e': shape [0,4611686018427387904,4611686018427387904] is too large: its bytes or strides exceed 2^63-1"},
        {R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data,
         "tensor 'x': shape [3] of F32 is 12 bytes, but data_offsets [0,8] hold 8"},
        {R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})", data,
         "tensor 'x': data_offsets [16, 24] run past the end of the data (8 bytes)"},
        {R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", data, "data_offsets [8,0] end before they begin"},
        {R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
         data, "tensor 'y': data_offsets [4, 8] overlap the previous tensor's data, which ends at 8"},
        {R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data,
         "tensor 'x': data_offsets [4, 8] leave a gap of 4 bytes after offset 0"},
        {"{" + ok_entry + "}", data + "xx", "the tensors hold 8 bytes of data, but the file has 10 after the header"},
        {"{" + ok_entry + "}", data.substr(0, 5),
         "tensor 'x': data_offsets [0, 8] run past the end of the data (5 bytes): the file is truncated"},
        {"{" + ok_entry + "," + ok_entry + "}", data, "duplicate key 'x' in the header"},
        {R"({"x":{"dtype":"F32","dtype":"F64","shape":[2],"data_offsets":[0,8]}})", data,
         "duplicate key 'dtype' in the header"},
        {R"({"__metadata__":{"epoch":3},)" + ok_entry + "}", data,
         "__metadata__ must map strings to strings, but 'epoch' is a number"},
        {R"({"__metadata__":[],)" + ok_entry + "}", data, "__metadata__ is an array, expected an object of strings"},
        {"{\"\xff\":1}", "", "the header is not valid JSON"},  // invalid UTF-8 in a name
    };
    for (const BadFile& c : cases) {
      INFO(c.header);
      CHECK(contains(load_error(dir, file_bytes(c.header, c.data)), c.message));
    }
  }
  SUBCASE("a directory") {
    CHECK_THROWS_WITH_AS(load_safetensors(dir.path.string()), doctest::Contains("not a regular file"), Error);
  }
  SUBCASE("a missing file") {
    CHECK_THROWS_WITH_AS(load_safetensors(dir.file("none")), doctest::Contains("cannot open: No such file or directory"), Error);
  }
}

namespace {

template <typename T, typename Bits>
Tensor from_bits(std::initializer_list<Bits> bits, std::vector<std::int64_t> sizes) {
  static_assert(sizeof(T) == sizeof(Bits));
  std::vector<T> values(bits.size());
  std::memcpy(values.data(), std::data(bits), values.size() * sizeof(T));
  return tensor<T>(values, sizes);
}

// The tensors of scripts/reference/make_safetensors.py's SMALL, element for element.
TensorDict small_golden_tensors() {
  return {
      {"weight", from_bits<float, std::uint32_t>({0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x00000001, 0x80000000}, {2, 3})},
      {"bias", from_bits<float, std::uint32_t>({0x7FC00001, 0x3DCCCCCD, 0x7F7FFFFF}, {3})},
      {"steps", tensor<std::int64_t>({-5}, {})},
      {"table", from_bits<double, std::uint64_t>({0x3FB999999999999A, 0xC004000000000000, 0x7FE1CCF385EBC8A0, 0x0000000000000001}, {2, 2})},
      {"mask", tensor<bool>({true, false, false, true})},
      {"empty", strata::empty({0, 4})},
  };
}

// Same dtype, shape and bytes.
void check_bit_exact(const TensorDict& got, const TensorDict& expected) {
  REQUIRE(got.size() == expected.size());
  for (const auto& entry : expected) {
    const auto& [name, e] = entry;
    CAPTURE(entry.first);  // CAPTURE's lambda may not capture a structured binding (clang 14)
    REQUIRE(got.count(name) == 1);
    const Tensor& g = got.at(name);
    CHECK(g.dtype() == e.dtype());
    CHECK(g.sizes().vec() == e.sizes().vec());
    const std::size_t nbytes = static_cast<std::size_t>(e.numel()) * element_size(e.dtype());
    if (nbytes) CHECK(std::memcmp(g.raw_data(), e.raw_data(), nbytes) == 0);
  }
}

}  // namespace

TEST_CASE("files written from the format description load bit-exact, and strata writes them byte for byte") {
  const std::string small = testing::golden_path("safetensors_small.safetensors");
  const SafetensorsFile file = load_safetensors(small);
  check_bit_exact(file.tensors, small_golden_tensors());
  CHECK(file.metadata == SafetensorsMetadata{{"format", "pt"}, {"source", "make_safetensors.py"}});
  CHECK(serialize_safetensors(small_golden_tensors(), file.metadata) == read_bytes(small));
  TempDir dir;
  save_safetensors(dir.file("again.safetensors"), file.tensors, file.metadata);
  CHECK(read_bytes(dir.file("again.safetensors")) == read_bytes(small));

  // Written in the given order (not the crate's), the F64 data sits at offset 3: copied, still exact.
  const SafetensorsFile misaligned = load_safetensors(testing::golden_path("safetensors_misaligned.safetensors"));
  check_bit_exact(misaligned.tensors, {{"flags", tensor<bool>({true, true, false})},
                                       {"values", tensor<double>({1.0, -2.0})}});
  CHECK(misaligned.metadata.empty());
}

}  // namespace test_safetensors
