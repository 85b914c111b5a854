// tests/modes/test_scaled_groups_kernel.cpp: the grouped int8 product's vector kernel and vector
// activation quantization (Note [The grouped product's kernel]) against plain loops written here, to
// the bit, on shapes that exercise every branch: output rows not a multiple of the two-row block,
// group counts below, at and past the eight-group block, groups of 32, 64 and of sizes the kernel
// leaves to plain loops, int8's whole range in the weights (-128 included), ties, zero groups,
// infinities and NaN in the activations, and rows split over two threads.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "modes/scaled_groups.h"
#include "modes/scaled_groups_kernel.h"
#include "ops/functions.h"

namespace test_scaled_groups_kernel {  // Note [Test files in unity builds]

using namespace strata;
namespace sg = strata::tracer::scaled_groups;

// A small deterministic generator (64-bit LCG, high bits).
struct Lcg {
  std::uint64_t state;
  std::uint32_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  }
  float uniform() { return static_cast<float>(next() % 2000001) / 1e6f - 1.0f; }  // [-1, 1]
};

struct Shape {
  std::int64_t n, m, k, group;
};

// Weights over int8's whole range with 127 and -128 in row 0; a zero group and a zero scale in row 1.
sg::Quantized weights(const Shape& s, Lcg& rng) {
  std::vector<std::int8_t> q(static_cast<std::size_t>(s.m * s.k));
  for (auto& v : q) v = static_cast<std::int8_t>(static_cast<int>(rng.next() % 256) - 128);
  q[0] = 127, q[1] = -128, q[2] = -128;
  std::vector<float> scales(static_cast<std::size_t>(s.m * (s.k / s.group)));
  for (auto& v : scales) v = (rng.uniform() + 1.5f) * 1e-3f;
  if (s.m > 1) {
    for (std::int64_t j = 0; j < s.group; ++j) q[static_cast<std::size_t>(s.k + j)] = 0;
    if (s.k / s.group > 1) scales[static_cast<std::size_t>(s.k / s.group + 1)] = 0.0f;
  }
  return {tensor(q, {s.m, s.k}), tensor(scales, {s.m, s.k / s.group})};
}

// Activations with a tie in group 0 (its max is 127, so the scale is 1 and 2.5 rounds away to 3), a
// zero group, and (when `special`) an infinity and a NaN in the last group.
Tensor activations(const Shape& s, Lcg& rng, bool special) {
  std::vector<float> x(static_cast<std::size_t>(s.n * s.k));
  for (auto& v : x) v = rng.uniform() * 3.0f;
  x[0] = 127.0f, x[1] = 2.5f, x[2] = -2.5f, x[3] = 0.5f, x[4] = -126.5f;
  if (s.k / s.group > 1)
    for (std::int64_t j = 0; j < s.group; ++j) x[static_cast<std::size_t>(s.group + j)] = 0.0f;
  if (special) {
    x[x.size() - 1] = INFINITY;
    x[x.size() - 2] = NAN;
    if (x.size() > static_cast<std::size_t>(s.group) + 1) x[x.size() - s.group - 1] = NAN;  // beside finite values
  }
  return tensor(x, {s.n, s.k});
}

// runq.c's product written out over the scalar quantization (quantize_activations): int32 dots,
// float32 sums in group order.
std::vector<float> plain_product(const Tensor& x, const sg::Quantized& w, std::int64_t group) {
  const sg::Quantized xq = sg::quantize_activations(x, group);
  const std::vector<std::int8_t> xd = xq.data.to_vector<std::int8_t>(), wd = w.data.to_vector<std::int8_t>();
  const std::vector<float> xs = xq.scales.to_vector<float>(), ws = w.scales.to_vector<float>();
  const std::int64_t n = x.sizes()[0], m = w.data.sizes()[0], k = x.sizes()[1], groups = k / group;
  std::vector<float> out(static_cast<std::size_t>(n * m));
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t i = 0; i < m; ++i) {
      float val = 0.0f;
      for (std::int64_t g = 0; g < groups; ++g) {
        std::int32_t dot = 0;
        for (std::int64_t j = g * group; j < (g + 1) * group; ++j)
          dot += static_cast<std::int32_t>(xd[static_cast<std::size_t>(t * k + j)]) * wd[static_cast<std::size_t>(i * k + j)];
        val += static_cast<float>(dot) * ws[static_cast<std::size_t>(i * groups + g)] * xs[static_cast<std::size_t>(t * groups + g)];
      }
      out[static_cast<std::size_t>(t * m + i)] = val;
    }
  return out;
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b;
  for (float f : v) b.push_back(std::bit_cast<std::uint32_t>(f));
  return b;
}

TEST_CASE("grouped int8 product: the vector kernel equals plain loops to the bit on odd shapes") {
  const Shape shapes[] = {
      {1, 37, 288, 32},   // stories15M's dim: 9 groups, one block of eight and one left over
      {3, 19, 320, 64},   // 5 groups of 64: no full block
      {2, 5, 576, 64},    // 9 groups of 64
      {1, 11, 1024, 32},  // 32 groups: four full blocks
      {4, 3, 768, 32},    // prefill-like: several activation rows
      {1, 1, 32, 32},     // one row, one group
      {2, 7, 48, 16},     // groups of 16: plain loops
      {1, 6, 192, 96},    // groups of 96: plain loops
  };
  Lcg rng{42};
  for (const Shape& s : shapes) {
    for (const bool special : {false, true}) {
      CAPTURE(s.m);
      CAPTURE(s.k);
      CAPTURE(s.group);
      CAPTURE(special);
      const sg::Quantized w = weights(s, rng);
      const Tensor x = activations(s, rng, special);
      const std::vector<float> expected = plain_product(x, w, s.group);
      CHECK(bits(sg::matmul(x, w.data, w.scales, s.group).to_vector<float>()) == bits(expected));
      // product_rows over any sub-range, against the library's own plain loop.
      const sg::Quantized xq = sg::quantize_activations(x, s.group);
      std::vector<float> fast(expected.size(), -1.0f), plain(expected.size(), -1.0f);
      const auto operands = [&](std::vector<float>& out) {
        return sg::GroupedOperands{xq.data.data_ptr<std::int8_t>(), xq.scales.data_ptr<float>(),
                                   w.data.data_ptr<std::int8_t>(), w.scales.data_ptr<float>(), out.data(),
                                   s.n, s.m, s.k, s.group};
      };
      const std::int64_t begin = s.m / 3, end = s.m - s.m / 4;
      sg::product_rows(operands(fast), begin, end);
      sg::product_rows_reference(operands(plain), begin, end);
      CHECK(bits(fast) == bits(plain));
      for (std::int64_t t = 0; t < s.n; ++t)
        for (std::int64_t i = 0; i < s.m; ++i) {
          const auto at = static_cast<std::size_t>(t * s.m + i);
          CHECK((i >= begin && i < end ? std::bit_cast<std::uint32_t>(plain[at]) == std::bit_cast<std::uint32_t>(expected[at])
                                       : fast[at] == -1.0f));
        }
    }
  }
}

TEST_CASE("grouped int8 product: rows split over two threads give the same bits") {
  const int threads_before = get_num_threads();
  set_num_threads(2);
  Lcg rng{7};
  const Shape s{4, 201, 1024, 32};  // 823k multiply-adds: above the product's serial grain
  const sg::Quantized w = weights(s, rng);
  const Tensor x = activations(s, rng, false);
  CHECK(bits(sg::matmul(x, w.data, w.scales, s.group).to_vector<float>()) == bits(plain_product(x, w, s.group)));
  set_num_threads(threads_before);
}

TEST_CASE("grouped int8 product: the kernel the build chose") {
  const std::string name = sg::product_kernel_name(32);
  CHECK(std::string(sg::product_kernel_name(16)) == "scalar");
#if defined(__AVX2__)
  CHECK(name != "scalar");
  CHECK(name == sg::product_kernel_name(64));
#else
  CHECK(name == "scalar");
#endif
}

}  // namespace test_scaled_groups_kernel
