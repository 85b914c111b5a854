// tests/lm/test_lm_model.cpp: lm::Model's logits against the plain-loop reference
// (tests/lm/reference_forward.h) to 1e-4, batched and token by token, with and without grouped KV
// heads; its errors; its work under InferenceMode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <strata/core/inference_mode.h>
#include <strata/core/util/error.h>
#include <strata/ops/functions.h>

#include "../../lm/model.h"
#include "lm_test_files.h"
#include "reference_forward.h"

namespace test_lm_model {

// The largest |a - b| over a row of logits.
double max_difference(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

std::vector<float> row(const strata::Tensor& logits, std::int64_t i) { return logits.select(0, i).to_vector<float>(); }

TEST_CASE("logits equal the reference's, batched, token by token and mixed") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    lm::Model model = lm::Model::load(lm_test_files::checkpoint(name));
    const std::vector<int> tokens = lm_reference::spec_prompt(model.config());
    const std::vector<std::vector<double>> expected = lm_reference::forward(model.config(), tokens);
    const auto n = static_cast<std::int64_t>(tokens.size());

    const strata::Tensor all = model.forward(tokens, 0, lm::Logits::All);
    REQUIRE(all.sizes().size() == 2);
    CHECK(all.size(0) == n);
    CHECK(all.size(1) == model.config().vocab_size);
    CHECK(all.is_inference());
    for (std::int64_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(max_difference(row(all, i), expected[static_cast<std::size_t>(i)]) < 1e-4);
    }
    const strata::Tensor last = model.forward(tokens, 0);
    CHECK(max_difference(last.to_vector<float>(), expected.back()) < 1e-4);

    for (std::int64_t i = 0; i < n; ++i) {  // one token at a time: the decode path
      CAPTURE(i);
      const strata::Tensor step = model.forward(std::span<const int>(tokens).subspan(static_cast<std::size_t>(i), 1), i);
      CHECK(step.dim() == 1);
      CHECK(max_difference(step.to_vector<float>(), expected[static_cast<std::size_t>(i)]) < 1e-4);
    }
    // A prompt of 10, then batches of 5 and 1 continuing from the cache.
    model.forward(std::span<const int>(tokens).first(10), 0);
    const strata::Tensor five = model.forward(std::span<const int>(tokens).subspan(10, 5), 10, lm::Logits::All);
    for (std::int64_t i = 0; i < 5; ++i) CHECK(max_difference(row(five, i), expected[static_cast<std::size_t>(10 + i)]) < 1e-4);
    const strata::Tensor one = model.forward(std::span<const int>(tokens).subspan(15, 1), 15);
    CHECK(max_difference(one.to_vector<float>(), expected[15]) < 1e-4);
  }
}

TEST_CASE("the last position of the sequence is usable, the next is refused") {
  lm::Model model = lm::Model::load(lm_test_files::checkpoint("tiny"));
  const std::int64_t seq = model.config().seq_len;
  const std::vector<int> tokens(static_cast<std::size_t>(seq), 5);
  CHECK(model.forward(tokens, 0).numel() == model.config().vocab_size);
  const int one[] = {5};
  CHECK(model.forward(one, seq - 1).numel() == model.config().vocab_size);
  CHECK_THROWS_WITH_AS(model.forward(one, seq), "lm::Model::forward: positions 64 to 64 do not fit the model's sequence length 64",
                       strata::Error);
  CHECK_THROWS_WITH_AS(model.forward(tokens, 1), "lm::Model::forward: positions 1 to 64 do not fit the model's sequence length 64",
                       strata::Error);
  CHECK_THROWS_WITH_AS(model.forward(one, -1), doctest::Contains("positions -1 to -1"), strata::Error);
  CHECK_THROWS_WITH_AS(model.forward(std::span<const int>(), 0), "lm::Model::forward: no tokens", strata::Error);
  const int bad[] = {1, 512};
  CHECK_THROWS_WITH_AS(model.forward(bad, 0), "lm::Model::forward: token 512 at position 1 is outside the vocabulary [0, 512)",
                       strata::Error);
  const int negative[] = {-1};
  CHECK_THROWS_WITH_AS(model.forward(negative, 0), doctest::Contains("token -1 at position 0"), strata::Error);
}

TEST_CASE("the KV cache and rotary tables are made once; weights are read, never copied") {
  lm::Model model = lm::Model::load(lm_test_files::checkpoint("tiny_gqa"));
  const lm::Config& c = model.config();
  // Bytes per token: every matrix and norm once, one embedding row.
  const std::uint64_t per_layer = 2 * 64 + 64 * 64 * 2 + 2 * 16 * 64 + 3 * 192 * 64;
  CHECK(model.weight_bytes_per_token() == 4 * (64 + 2 * per_layer + 64 + 512 * 64));
  const float* embed = model.weights().embed.data_ptr<float>();
  const int tokens[] = {1, 7, 9};
  model.forward(tokens, 0);
  CHECK(model.weights().embed.data_ptr<float>() == embed);
  CHECK(c.kv_dim() == 16);
}

}  // namespace test_lm_model
