// lm/fake_model.h: `strata-lm --fake --config CONFIG.json`: the model a Hugging Face config.json
// describes, built under strata's FakeTensorMode (every weight, the KV cache and the rotary tables are
// shapes without data), its parameters, its KV cache's bytes per token and a decode step's FLOPs per
// module, for a model far larger than the machine.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "inspect.h"
#include "weights.h"

namespace lm {

struct FakeModelReport {
  Config config;
  std::int64_t parameters = 0;            // each weight tensor once (a tied head is the embedding)
  std::uint64_t kv_bytes_per_token = 0;   // Model::kv_cache_bytes_per_token
  std::uint64_t weight_bytes_per_token = 0;
  ForwardFlops decode;                    // one token at position context - 1
};

// The elements of every weight tensor, each tensor counted once.
std::int64_t parameter_count(const Weights& weights);

// Builds the model of `config` under a FakeTensorMode (float32 weights, Hugging Face's rotary layout)
// and counts the FLOPs of a decode step that attends to `context` positions (1 .. seq_len).
FakeModelReport inspect_fake_model(const Config& config, std::int64_t context);

// What --fake prints; `label` names the config file.
std::string fake_model_text(const FakeModelReport& report, const std::string& label);

}  // namespace lm
