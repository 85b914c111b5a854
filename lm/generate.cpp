// lm/generate.cpp: run.c's generate loop, with the prompt fed in one batched call.
#include "generate.h"

#include <chrono>
#include <vector>

#include <strata/core/util/error.h>

namespace lm {

// Note [The prompt is one call, the timer is run.c's]
// run.c feeds the prompt a token per step, forcing each next token, and prints each forced token as
// its step ends. Here the forced tokens need no logits, so the loop emits them without running the
// model and feeds everything not yet fed in one call when the first token must be sampled: the
// prompt becomes one batched pass (matrix-matrix products), and the output is run.c's, token for
// token. run.c starts its timer after the first step (position 0's forward and first token) and
// reports (pos - 1) / elapsed; here the timer starts at the first emission too, which now comes
// before any forward, so the measured time holds the whole prompt pass (run.c's leaves position 0
// out): the same count over at least as much work.
GenerationStats generate(Model& model, Sampler& sampler, std::span<const int> prompt, std::int64_t steps,
                         const TokenCallback& on_token) {
  constexpr int kBos = 1;
  STRATA_CHECK(!prompt.empty(), "lm::generate: the prompt has no tokens (expected at least BOS)");
  const std::int64_t seq_len = model.config().seq_len;
  if (steps <= 0 || steps > seq_len) steps = seq_len;
  const auto n = static_cast<std::int64_t>(prompt.size());
  std::vector<int> sequence(prompt.begin(), prompt.end());  // sequence[p]: the token fed at position p
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  bool started = false;
  std::int64_t fed = 0;  // positions in the KV cache
  std::int64_t pos = 0;
  int token = prompt[0];
  while (pos < steps) {
    int next;
    if (pos < n - 1) {
      next = prompt[static_cast<std::size_t>(pos + 1)];
    } else {
      const strata::Tensor logits =
          model.forward(std::span<const int>(sequence).subspan(static_cast<std::size_t>(fed), static_cast<std::size_t>(pos + 1 - fed)), fed);
      fed = pos + 1;
      next = sampler.sample(logits);
    }
    ++pos;
    if (next == kBos) break;
    if (on_token) on_token(token, next);
    token = next;
    if (pos >= n) sequence.push_back(next);
    if (!started) {
      start = Clock::now();
      started = true;
    }
  }
  GenerationStats stats;
  stats.positions = pos;
  if (started) stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (pos > 1 && stats.seconds > 0) stats.tokens_per_second = static_cast<double>(pos - 1) / stats.seconds;
  return stats;
}

}  // namespace lm
