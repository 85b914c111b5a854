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

int Sampler::sample(const strata::Tensor& logits) {
  const strata::InferenceMode guard;
  STRATA_CHECK(logits.dim() == 1 && logits.numel() > 0, "lm::Sampler: expected a row of logits, got a tensor of ",
               logits.dim(), " dimensions");
  if (options_.temperature == 0) return static_cast<int>(logits.argmax().item<std::int64_t>());
  STRATA_CHECK(false, "lm::Sampler: sampling with a temperature needs multinomial (not in this build yet); use -t 0");
  return 0;
}

}  // namespace lm
