// lm/sampler.h: the next token from a row of logits: greedy (temperature 0), or a draw from
// softmax(logits / temperature), restricted to the top-p nucleus when 0 < top_p < 1, on strata's
// PyTorch-identical CPU generator (torch.multinomial's draws for the same seed).
#pragma once

#include <cstdint>

#include <strata/core/generator.h>
#include <strata/core/tensor.h>

namespace lm {

struct SamplerOptions {
  double temperature = 1.0;  // 0: argmax (the first maximum)
  double top_p = 0.9;        // outside (0, 1): sample from the whole distribution
  std::uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  // logits: float32 [vocab].
  int sample(const strata::Tensor& logits);
  const SamplerOptions& options() const { return options_; }

 private:
  SamplerOptions options_;
  strata::Generator generator_;
};

}  // namespace lm
