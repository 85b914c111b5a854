// bench/test_lm_baseline.cpp: strata-bench's run.c-style baseline (bench/lm_baseline.h) computes the
// model lm::Model computes: the same logits (to 1e-4) and the same greedy tokens over the whole
// sequence, with and without grouped KV heads; and it refuses a truncated file. No timings.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "bench/lm_baseline.h"
#include "lm/generate.h"
#include "lm/model.h"
#include "lm/sampler.h"
#include "tests/lm/lm_test_files.h"

namespace test_lm_baseline {

TEST_CASE("the baseline's logits and greedy tokens are lm::Model's") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const std::string path = lm_test_files::checkpoint(name);
    lm::Model model = lm::Model::load(path);
    strata::bench::LmBaseline baseline(path);
    REQUIRE(baseline.vocab_size() == model.config().vocab_size);
    REQUIRE(baseline.seq_len() == model.config().seq_len);

    // Token by token along a fixed sequence: every row of logits.
    for (int pos = 0; pos < 12; ++pos) {
      CAPTURE(pos);
      const int token = pos == 0 ? 1 : 3 + (pos * 37) % 500;
      const std::vector<float> expected = model.forward(std::span<const int>(&token, 1), pos).to_vector<float>();
      const float* got = baseline.forward(token, pos);
      double worst = 0;
      for (std::size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(double{got[i]} - expected[i]));
      CHECK(worst < 1e-4);
    }

    // Greedy over the whole sequence, as the benchmark runs it.
    lm::SamplerOptions options;
    options.temperature = 0;
    lm::Sampler sampler(options);
    std::vector<int> strata_tokens;
    const int bos = 1;
    lm::generate(model, sampler, std::span<const int>(&bos, 1), 0, [&](int, int t) { strata_tokens.push_back(t); });
    const strata::bench::BaselineRun run = strata::bench::baseline_greedy(baseline, 0);
    CHECK(strata_tokens.size() > 1);
    CHECK(run.tokens == strata_tokens);
  }
}

TEST_CASE("the baseline refuses a file whose size is not its header's") {
  const std::string whole = lm_test_files::checkpoint("tiny");
  const std::string cut = lm_test_files::temp_path("baseline-truncated.bin");
  std::filesystem::copy_file(whole, cut, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(cut, std::filesystem::file_size(whole) - 4);
  CHECK_THROWS_AS(strata::bench::LmBaseline{cut}, std::runtime_error);
  CHECK_THROWS_AS(strata::bench::LmBaseline{lm_test_files::temp_path("missing.bin")}, std::runtime_error);
}

}  // namespace test_lm_baseline
