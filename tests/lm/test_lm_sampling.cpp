// tests/lm/test_lm_sampling.cpp: strata-lm samples the tokens PyTorch samples. Every run of
// tests/golden/lm/sampling.json (scripts/reference/lm_sampling.py: temperature, softmax, top-p,
// torch.multinomial on a generator seeded per run; greedy runs too) is reproduced token for token by
// lm::Sampler in lm::generate, and the CLI with -t > 0 prints the text of those same draws.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../lm/cli.h"
#include "../../lm/generate.h"
#include "../../lm/model.h"
#include "../../lm/sampler.h"
#include "../../lm/tokenizer.h"
#include "lm_test_files.h"

namespace test_lm_sampling {

using nlohmann::json;

const std::string kTok512 = std::string(STRATA_LM_DATA_DIR) + "/tok512.bin";

json sampling_golden() {
  std::ifstream in(std::string(STRATA_GOLDEN_DIR) + "/lm/sampling.json");
  REQUIRE_MESSAGE(in.is_open(), "missing golden tests/golden/lm/sampling.json");
  return json::parse(in);
}

struct Generated {
  std::vector<int> fed;  // the prompt, then each emitted token (the golden's "tokens")
  bool stopped_on_bos = false;
};

Generated generate_with(const std::string& config, const lm::SamplerOptions& o, const std::vector<int>& prompt,
                        std::int64_t steps) {
  lm::Model model = lm::Model::load(lm_test_files::checkpoint(config));
  lm::Sampler sampler(o);
  Generated g{{prompt[0]}};
  const lm::GenerationStats stats = lm::generate(model, sampler, prompt, steps, [&](int, int token) { g.fed.push_back(token); });
  // Each position run emits its token, except a sampled BOS, which ends the run unemitted.
  g.stopped_on_bos = static_cast<std::int64_t>(g.fed.size()) == stats.positions;
  return g;
}

TEST_CASE("every sampling.json run, token for token: greedy, temperature, top-p, a sampled BOS") {
  int runs = 0, sampled = 0, stopped = 0;
  std::set<std::vector<int>> distinct;
  for (const json& run : sampling_golden()) {
    CAPTURE(run.dump());
    lm::SamplerOptions o;
    o.temperature = run["temperature"].get<double>();
    o.top_p = run["topp"].get<double>();
    o.seed = run["seed"].get<std::uint64_t>();
    const Generated g = generate_with(run["config"].get<std::string>(), o, run["prompt_tokens"].get<std::vector<int>>(),
                                      run["steps"].get<std::int64_t>());
    CHECK(g.fed == run["tokens"].get<std::vector<int>>());
    CHECK(g.stopped_on_bos == run["stopped_on_bos"].get<bool>());
    ++runs;
    if (o.temperature > 0) {
      ++sampled;
      distinct.insert(g.fed);
    }
    stopped += run["stopped_on_bos"].get<bool>() ? 1 : 0;
  }
  CHECK(runs == 16);
  CHECK(sampled == 12);
  CHECK(stopped >= 2);                 // seed 18 samples BOS on both configs
  CHECK(distinct.size() >= 10);        // the seeds and settings give different runs
}

// The text strata-lm prints for `tokens` (each decoded after its predecessor), as run.c prints it.
std::string printed(const lm::Tokenizer& t, const std::vector<int>& tokens) {
  std::string out;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string_view piece = t.decode(tokens[i - 1], tokens[i]);
    if (lm::is_printable_piece(piece)) out += piece;
  }
  return out + "\n";
}

TEST_CASE("the CLI with a temperature prints the sampler's draws for its seed") {
  const std::string model = lm_test_files::checkpoint("tiny_gqa");
  const lm::Tokenizer t = lm::Tokenizer::load(kTok512, 512);
  const std::vector<int> prompt = t.encode("Tom saw", true, false);
  std::vector<std::string> outputs;
  for (const char* seed : {"42", "1234"}) {
    CAPTURE(seed);
    std::ostringstream out, err;
    const std::vector<std::string> args{model, "-z", kTok512, "-i", "Tom saw", "-n", "24", "-t", "0.8", "-p", "0.9", "-s", seed};
    const int code = lm::run_cli(args, out, err);
    CHECK(code == 0);
    CHECK(err.str().rfind("achieved tok/s: ", 0) == 0);
    lm::SamplerOptions o;
    o.temperature = 0.8;
    o.top_p = 0.9;
    o.seed = std::stoull(seed);
    CHECK(out.str() == printed(t, generate_with("tiny_gqa", o, prompt, 24).fed));
    outputs.push_back(out.str());
  }
  CHECK(outputs[0] != outputs[1]);
  std::ostringstream greedy, err;
  const std::vector<std::string> greedy_args{model, "-z", kTok512, "-i", "Tom saw", "-n", "24", "-t", "0"};
  CHECK(lm::run_cli(greedy_args, greedy, err) == 0);
  CHECK(greedy.str() != outputs[0]);
}

}  // namespace test_lm_sampling
