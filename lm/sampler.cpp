// lm/sampler.cpp: greedy, temperature and top-p sampling on strata ops and strata's generator.
#include "sampler.h"

#include <strata/core/inference_mode.h>
#include <strata/core/util/error.h>
#include <strata/ops/functions.h>

namespace lm {

Sampler::Sampler(const SamplerOptions& options) : options_(options) {
  STRATA_CHECK(options.temperature >= 0, "lm::Sampler: temperature ", options.temperature, " is negative");
  STRATA_CHECK(options.top_p >= 0 && options.top_p <= 1, "lm::Sampler: top_p ", options.top_p, " is outside [0, 1]");
  generator_.manual_seed(options.seed);
}

// Note [The sampler is the reference's loop, op for op]
// With a temperature, the token is what scripts/reference/lm_sampling.py's torch code draws, so a
// seed gives the tokens of tests/golden/lm/sampling.json: probs = softmax(logits / t) in float32;
// for 0 < top_p < 1, probs sorted descending (stable), their running sum, the entries whose
// preceding mass (sum - p) exceeds top_p set to 0, one multinomial draw over the sorted row, mapped
// back through the sort's indices; otherwise one multinomial draw over probs. multinomial with one
// sample takes the exponential trick (Note [multinomial's two paths]): one exponential draw per
// vocabulary entry from the generator, as torch.multinomial does, so the generator's stream stays
// in step with PyTorch's across tokens. The masked entries still draw (their p / q is 0).
int Sampler::sample(const strata::Tensor& logits) {
  const strata::InferenceMode guard;
  STRATA_CHECK(logits.dim() == 1 && logits.numel() > 0, "lm::Sampler: expected a row of logits, got a tensor of ",
               logits.dim(), " dimensions");
  if (options_.temperature == 0) return static_cast<int>(logits.argmax().item<std::int64_t>());
  const strata::Tensor probs = strata::softmax(strata::div(logits, options_.temperature), -1);
  if (options_.top_p > 0 && options_.top_p < 1) {
    const auto [ordered, index] = strata::sort(probs, 0, /*descending=*/true);
    const strata::Tensor outside = strata::gt(strata::sub(strata::cumsum(ordered, 0), ordered), options_.top_p);
    const strata::Tensor nucleus = strata::masked_fill(ordered, outside, 0.0);
    const std::int64_t k = strata::multinomial(nucleus, 1, false, &generator_).item<std::int64_t>();
    return static_cast<int>(index.select(0, k).item<std::int64_t>());
  }
  return static_cast<int>(strata::multinomial(probs, 1, false, &generator_).item<std::int64_t>());
}

}  // namespace lm
