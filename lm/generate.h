// lm/generate.h: run.c's generation loop on an lm::Model: position 0 feeds the prompt's first token
// (BOS), the rest of the prompt is forced (in one batched pass), then tokens are sampled one at a
// time until `steps` positions or a sampled BOS.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "model.h"
#include "sampler.h"

namespace lm {

struct GenerationStats {
  std::int64_t positions = 0;      // run.c's `pos` at the end: tokens fed to the model
  double seconds = 0;              // from the first token's emission to the end (run.c's timer)
  double tokens_per_second = 0;    // (positions - 1) / seconds, as run.c reports it; 0 when positions <= 1
};

// Called for each token the loop emits (forced prompt tokens, then sampled ones), with the token fed
// before it (for Tokenizer::decode). Not called for a sampled BOS, which ends the loop.
using TokenCallback = std::function<void(int prev_token, int token)>;

// prompt: at least one token (run.c's encode(text, bos=1, eos=0) gives BOS first). steps: positions
// to run, clamped to [1, seq_len] by the caller as run.c does (0 means seq_len here too).
GenerationStats generate(Model& model, Sampler& sampler, std::span<const int> prompt, std::int64_t steps,
                         const TokenCallback& on_token);

}  // namespace lm
