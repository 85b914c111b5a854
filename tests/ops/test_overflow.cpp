// tests/ops/test_overflow.cpp: bad sizes, strides and integer arithmetic give a strata::Error or
// PyTorch's wrap-around result, never undefined behaviour or a crash. Without the fix the integer
// cases are undefined behaviour: they fail under UBSan with halt_on_error=1, as .ci/run runs them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/interpose/interposer.h"
#include "core/storage.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_overflow {  // Note [Test files in unity builds]

// Note [Huge allocations under AddressSanitizer]
// The allocation-failure test asks for more memory than any machine has. AddressSanitizer's default
// is to abort the process on such a request; with this option its nothrow operator new returns null,
// as glibc's does, so the test sees strata's Error (Note [Allocation failure is an Error]). Only
// AddressSanitizer's runtime (gcc's or clang's) asks for this function; elsewhere it is never called.
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}

using namespace strata;
using doctest::Contains;
using strata::testing::sizes_of;

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t k2e40 = std::int64_t{1} << 40;
constexpr std::int64_t k2e62 = std::int64_t{1} << 62;

Tensor i64(std::initializer_list<std::int64_t> values) { return tensor<std::int64_t>(values); }
Tensor f32(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes)); }
std::int64_t only(const Tensor& t) { return t.item<std::int64_t>(); }
}  // namespace

TEST_CASE("empty reports a size whose bytes overflow, on CPU and meta, as PyTorch does") {
  for (const Device device : {Device::CPU, Device::Meta}) {
    CAPTURE(device);
    CHECK_THROWS_WITH_AS(strata::empty({k2e40, k2e40}, {.device = device}),
                         Contains("Storage size calculation overflowed with sizes=[1099511627776, 1099511627776]"), Error);
    // numel 2^61 fits int64, its 8-byte elements do not.
    CHECK_THROWS_WITH_AS(strata::empty({std::int64_t{1} << 61}, {.dtype = ScalarType::Float64, .device = device}),
                         Contains("Storage size calculation overflowed with sizes=[2305843009213693952]"), Error);
    CHECK_THROWS_WITH_AS(strata::empty({0, k2e40, k2e40}, {.device = device}), Contains("Stride calculation overflowed"),
                         Error);
  }
  CHECK(sizes_of(strata::empty({0, k2e40}, {.device = Device::Meta})) == std::vector<std::int64_t>{0, k2e40});
}

TEST_CASE("an output shaped like its input is still checked in its own dtype, and gets row-major strides") {
  // make_contiguous_like trusts the input's numel but not its byte count in the output's dtype.
  const Tensor flags = strata::empty({std::int64_t{1} << 61}, {.dtype = ScalarType::Bool, .device = Device::Meta});
  CHECK_THROWS_WITH_AS(div(flags, flags), Contains("Storage size calculation overflowed with sizes=[2305843009213693952]"), Error);
  CHECK(sizes_of(add(flags, flags)) == std::vector<std::int64_t>{std::int64_t{1} << 61});  // bool stays one byte
  // Without elements, the input's numel says nothing about the strides of the output's shape.
  const Tensor none = expand(strata::empty({0, 1, 1}, {.device = Device::Meta}), {0, k2e40, k2e40});
  CHECK_THROWS_WITH_AS(add(none, none), Contains("Stride calculation overflowed"), Error);
  // An input that is contiguous with an odd stride on a size-1 dimension: the output is row-major.
  const Tensor base = f32({2, 200});
  const Tensor odd = strata::detail::make_view(base, {1, 3}, {100, 1}, 0);
  REQUIRE(odd.is_contiguous());
  CHECK(strata::testing::strides_of(add(odd, odd)) == std::vector<std::int64_t>{3, 1});
  CHECK(strata::testing::strides_of(neg(odd)) == std::vector<std::int64_t>{3, 1});
}

TEST_CASE("an allocation the machine cannot satisfy is PyTorch's allocator error") {
  // 2^47 float64 elements are 1 PiB, more than any address space holds.
  CHECK_THROWS_WITH_AS(strata::empty({std::int64_t{1} << 47}, {.dtype = ScalarType::Float64}),
                       Contains("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1125899906842624 bytes. "
                                "Error code 12 (Cannot allocate memory)"),
                       Error);
  CHECK_THROWS_WITH_AS(StorageImpl::allocate(std::numeric_limits<std::size_t>::max()),
                       Contains("DefaultCPUAllocator: can't allocate memory: you tried to allocate 18446744073709551615 bytes"),
                       Error);
}

TEST_CASE("tensor() and new_empty_strided check numel and storage size") {
  CHECK_THROWS_WITH_AS(tensor<float>(std::vector<float>{}, {std::int64_t{1} << 32, std::int64_t{1} << 32}),
                       Contains("numel: integer multiplication overflow"), Error);
  const Tensor base = f32({2});
  CHECK_THROWS_WITH_AS(new_empty_strided(base, {2, k2e62}, {k2e62, 1}),
                       Contains("Storage size calculation overflowed with sizes=[2, 4611686018427387904] and "
                                "strides=[4611686018427387904, 1]"),
                       Error);
  CHECK_THROWS_WITH_AS(new_empty_strided(base, {k2e40, k2e40}, {0, 0}), Contains("numel: integer multiplication overflow"),
                       Error);
}

TEST_CASE("as_strided checks its storage arithmetic for overflow") {
  const Tensor t = f32({4});
  // Unchecked, 2^62 + 1 elements of 4 bytes wrap to 4 bytes and pass the bounds check.
  CHECK_THROWS_WITH_AS(as_strided(t, {2}, {k2e62}),
                       Contains("Storage size calculation overflowed with sizes=[2] and strides=[4611686018427387904]"), Error);
  CHECK_THROWS_WITH_AS(as_strided(t, {k2e40, k2e40}, {0, 0}), Contains("numel: integer multiplication overflow"), Error);
  CHECK_THROWS_WITH_AS(as_strided(t, {2}, {1}, kMax), Contains("Storage size calculation overflowed"), Error);
  const Tensor meta = strata::empty({4}, {.device = Device::Meta});
  CHECK_THROWS_WITH_AS(as_strided(meta, {3, 3}, {kMax / 2, kMax / 2}), Contains("Storage size calculation overflowed"), Error);
  CHECK(sizes_of(as_strided(t, {2, 2}, {1, 2})) == std::vector<std::int64_t>{2, 2});
}

TEST_CASE("expand rejects negative sizes other than -1 and sizes whose numel overflows") {
  CHECK_THROWS_WITH_AS(expand(f32({3}), {-2, 3}),
                       Contains("The expanded size of the tensor (-2) isn't allowed in a leading, non-existing dimension 0"),
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({1}), {-2}), Contains("The expanded size of the tensor (-2) isn't allowed at dimension 0"),
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({3}), {-1, 3}),
                       Contains("The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({1, 1}), {k2e40, k2e40}), Contains("numel: integer multiplication overflow"), Error);
  CHECK(sizes_of(expand(f32({1, 3}), {2, -1, -1})) == std::vector<std::int64_t>{2, 1, 3});
}

TEST_CASE("view rejects a shape whose product overflows to the input's numel; an empty one wraps its strides") {
  // 2^32 * 2^32 wraps to 0, the numel of the input.
  CHECK_THROWS_WITH_AS(view(f32({0}), {std::int64_t{1} << 32, std::int64_t{1} << 32}),
                       Contains("shape '[4294967296, 4294967296]' is invalid for input of size 0"), Error);
  // [0, 2^40, 2^40] has no elements: PyTorch makes the view with strides that wrap (Note [An empty
  // view's strides wrap]; tests/ops/test_empty_shapes.cpp).
  CHECK(testing::strides_of(view(f32({0}), {0, k2e40, k2e40})) == std::vector<std::int64_t>{0, k2e40, 1});
}

TEST_CASE("make_wrapper_tensor refuses geometry no tensor can have") {
  auto wrap = [](IntArrayRef sizes, IntArrayRef strides) { return testing::make_inert_wrapper(sizes, strides); };
  CHECK_THROWS_WITH_AS(wrap({-2, 3}, {3, 1}), Contains("Trying to create tensor with negative dimension -2: [-2, 3]"), Error);
  CHECK_THROWS_WITH_AS(wrap({3, k2e62}, {k2e62, 1}), Contains("Storage size calculation overflowed"), Error);
  CHECK(sizes_of(wrap({2, 3}, {3, 1})) == std::vector<std::int64_t>{2, 3});
}

TEST_CASE("fill_ and Scalar refuse a floating value int64 cannot hold, as PyTorch's checked_convert does") {
  const char* message = "value cannot be converted to type int64_t without overflow";
  const Tensor t = i64({1, 2, 3});
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const double bad : {inf, -inf, std::numeric_limits<double>::quiet_NaN(), 1e30, -1e30, 9223372036854775808.0}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(fill_(t, bad), Contains(message), Error);
    CHECK_THROWS_WITH_AS(Scalar(bad).to<std::int64_t>(), message, Error);
    CHECK_THROWS_WITH_AS(Scalar(bad).to_int(), message, Error);
  }
  CHECK(t.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 2, 3});  // nothing written
  CHECK(fill_(t, -9223372036854775808.0).to_vector<std::int64_t>() == std::vector<std::int64_t>{kMin, kMin, kMin});
  CHECK(fill_(t, -1.5).to_vector<std::int64_t>() == std::vector<std::int64_t>{-1, -1, -1});
  CHECK(Scalar(inf).to<float>() == std::numeric_limits<float>::infinity());
}

TEST_CASE("int64 add, sub, mul and neg wrap around as PyTorch's do") {
  CHECK(only(add(i64({kMax}), i64({1}))) == kMin);
  CHECK(only(add(i64({kMax}), i64({1}), 2)) == kMin + 1);
  CHECK(only(sub(i64({kMin}), i64({1}))) == kMax);
  CHECK(only(sub(i64({0}), i64({1}), kMin)) == kMin);  // -alpha itself overflows
  CHECK(only(mul(i64({kMax}), i64({2}))) == -2);
  CHECK(only(mul(i64({kMax}), Scalar(std::int64_t{2}))) == -2);
  CHECK(only(neg(i64({kMin}))) == kMin);
  const Tensor a = i64({kMax});
  add_(a, i64({1}));
  CHECK(only(a) == kMin);
  mul_(a, i64({-1}));
  CHECK(only(a) == kMin);
}

TEST_CASE("int64 mm, addmm and sum wrap around") {
  const Tensor row = tensor<std::int64_t>({kMax, 1}, {1, 2});
  const Tensor ones = tensor<std::int64_t>({1, 1}, {2, 1});
  CHECK(only(mm(row, ones)) == kMin);
  CHECK(only(addmm(tensor<std::int64_t>({kMax}, {1, 1}), tensor<std::int64_t>({1}, {1, 1}),
                   tensor<std::int64_t>({1}, {1, 1}), 2, 1)) == -1);
  CHECK(only(addmm(tensor<std::int64_t>({0}, {1, 1}), row, ones, 1, 2)) == 0);
  CHECK(only(sum(i64({kMax, 1}))) == kMin);
  CHECK(sum(i64({kMax, 1, kMax, 1}), {0}).item<std::int64_t>() == 0);
}

TEST_CASE("randint over the whole int64 range stays in range without overflow") {
  Generator g;
  g.manual_seed(7);
  const std::vector<std::int64_t> values = randint(kMin, kMax, {256}, {}, &g).to_vector<std::int64_t>();
  bool negative = false, positive = false;
  for (const std::int64_t v : values) {
    CHECK(v < kMax);
    negative |= v < 0;
    positive |= v > 0;
  }
  CHECK((negative && positive));
  const std::vector<std::int64_t> top = randint(kMax - 2, kMax, {64}, {}, &g).to_vector<std::int64_t>();
  for (const std::int64_t v : top) CHECK((v == kMax - 2 || v == kMax - 1));
}

TEST_CASE("a float32 sum accumulates in double on the contiguous path too") {
  const Tensor tenth = fill_(strata::empty({10000000}), 0.1f);
  CHECK(std::abs(sum(tenth).item<double>() - 1e6) <= 1.0);  // float accumulation gives 1087937

  Generator g;
  g.manual_seed(0);
  const Tensor x = rand({1000, 1000}, {}, &g);
  const double contiguous = sum(x).item<double>();
  const double strided = sum(t(x)).item<double>();
  CHECK(std::abs(contiguous - strided) <= 1e-6 * std::abs(strided));
  const std::vector<double> rows = sum(x, {0}).to_vector<double>();     // the contiguous rows path
  const std::vector<double> cols = sum(t(x), {1}).to_vector<double>();  // the same sums, strided
  double worst = 0;  // largest relative difference
  for (std::size_t j = 0; j < rows.size(); ++j) worst = std::max(worst, std::abs(rows[j] - cols[j]) / std::abs(cols[j]));
  CHECK(worst <= 1e-6);
}

TEST_CASE("a view without elements may have any storage offset, and its address is never formed") {
  // as_strided only bounds the storage a view reaches, and an empty view reaches none (PyTorch's
  // rule); computing base + offset for it would overflow (UndefinedBehaviorSanitizer checks).
  const Tensor base = randn({4});
  const Tensor empty = as_strided(base, {0}, {1}, std::int64_t{1} << 61);
  CHECK(empty.numel() == 0);
  CHECK(empty.storage_offset() == (std::int64_t{1} << 61));
  CHECK(empty.impl()->data() == base.impl()->storage()->data());
  CHECK(clone(empty).numel() == 0);
}

TEST_CASE("strided loops over a view without elements do not multiply its huge sizes and strides") {
  // Found by the API fuzzer. An empty view may have any sizes and strides (it reaches no storage);
  // the strided loop merged dimensions by testing stride * size, which overflowed (UBSan: signed
  // integer overflow) for [0, 5, 2^62 + 1, 5] with stride 2 in the huge dimension.
  const std::int64_t huge = (std::int64_t{1} << 62) + 1;
  const Tensor empty = as_strided(randn({4}), {0, 5, huge, 5}, {1, 1, 2, 1}, 0);
  CHECK(sum(empty).item<float>() == 0.0f);  // the reduction's loop
  CHECK(zero_(empty).numel() == 0);         // fill's loop
  CHECK(copy_(empty, empty).numel() == 0);  // copy_'s loop
}

}  // namespace test_overflow
