// tests/ops/test_output_layout.cpp: pointwise outputs and preserve_format copies get PyTorch's
// strides (Note [Outputs follow their inputs' layout]); each expectation was printed by PyTorch.
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_output_layout {  // Note [Test files in unity builds]

using namespace strata;

using strata::testing::strides_of;
using S = std::vector<std::int64_t>;

TEST_CASE("a pointwise output is laid out like its inputs") {
  const Tensor x = randn({3, 2});
  CHECK(strides_of(relu(t(x))) == S{1, 2});
  CHECK(strides_of(add(t(x), randn({2, 3}))) == S{1, 2});  // the first input decides...
  CHECK(strides_of(add(randn({2, 3}), t(x))) == S{3, 1});  // ...in either order
  CHECK(strides_of(mul(t(x), randn({3}))) == S{1, 2});     // a broadcast input has no say
  CHECK(strides_of(mul(t(x), Scalar(2.0))) == S{1, 2});
  const Tensor y = transpose(transpose(randn({2, 3, 4}), 0, 2), 1, 2);  // (4, 2, 3), strides (1, 12, 4)
  REQUIRE(strides_of(y) == S{1, 12, 4});
  CHECK(strides_of(neg(y)) == S{1, 12, 4});
  CHECK(strides_of(add(y, randn({4, 2, 3}))) == S{1, 12, 4});
  // Values do not depend on the layout.
  CHECK(add(t(x), t(x)).to_vector<float>() == contiguous(add(t(x), t(x))).to_vector<float>());
}

TEST_CASE("preserve_format keeps dense strides and orders the rest like the input") {
  CHECK(strides_of(empty_like(expand(randn({3, 1}), {3, 4}))) == S{4, 1});
  CHECK(strides_of(empty_like(as_strided(randn({4}), {2, 3}, {1, 1}))) == S{1, 2});
  CHECK(strides_of(clone(transpose(expand(randn({4, 1, 3}), {4, 2, 3}), 0, 1))) == S{12, 3, 1});
  CHECK(strides_of(clone(t(randn({3, 2})))) == S{1, 2});
}

TEST_CASE("a permuted output whose size overflows is refused, and no stride overflows first") {
  // Found by the API fuzzer: the strides of a transposed layout were multiplied without a check,
  // so a broadcast whose element count overflows int64 overflowed there first (UBSan: signed integer
  // overflow) before the storage size check refused it.
  const Tensor a = t(strata::empty({4, std::int64_t{1} << 40}, {.device = Device::Meta}));  // [2^40, 4], transposed
  const Tensor b = strata::empty({std::int64_t{1} << 30, 1, 1}, {.device = Device::Meta});
  CHECK_THROWS_WITH_AS(add(a, b),
                       "[aten::add] Storage size calculation overflowed with sizes=[1073741824, 1099511627776, 4] and "
                       "strides=[4398046511104, 1, 1099511627776]",
                       Error);
}

}  // namespace test_output_layout
