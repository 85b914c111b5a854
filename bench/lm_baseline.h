// bench/lm_baseline.h: strata-bench's hand-written anchor for strata-lm: the same Llama-2 forward
// done the way llama2.c's run.c does it (plain loops over float arrays, one token per call, OpenMP
// over a matrix's output rows), on the same float32 `.bin` memory-mapped. Written here, not copied;
// compiled apart with -O3 -ffast-math -march=native (bench/meson.build) and free of strata headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::bench {

class LmBaseline {
 public:
  // Maps `path` (llama2.c's version-0 float32 checkpoint) and allocates the activations and the KV
  // cache. Throws std::runtime_error for a file that cannot be read or whose size is not its header's.
  explicit LmBaseline(const std::string& path);
  ~LmBaseline();
  LmBaseline(const LmBaseline&) = delete;
  LmBaseline& operator=(const LmBaseline&) = delete;

  // Runs `token` at position `pos` (positions 0 .. pos - 1 in the cache already) and returns the
  // logits, [vocab_size], valid until the next call.
  const float* forward(int token, int pos);

  int vocab_size() const { return vocab_; }
  int seq_len() const { return seq_len_; }
  // The first maximum of the last logits (greedy sampling, as run.c's argmax).
  int argmax() const;

 private:
  struct Layer {
    const float *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w1, *w2, *w3;
  };

  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  int dim_ = 0, hidden_ = 0, layers_ = 0, heads_ = 0, kv_heads_ = 0, vocab_ = 0, seq_len_ = 0;
  const float* embed_ = nullptr;
  const float* final_norm_ = nullptr;
  const float* classifier_ = nullptr;
  std::vector<Layer> layer_;
  // Activations and the cache ([layer][position][kv_dim]), as run.c's RunState holds them.
  std::vector<float> x_, xb_, xb2_, hb_, hb2_, q_, att_, logits_, key_cache_, value_cache_;
};

// A greedy run as run.c's generate loop does it: BOS (1) at position 0, then the argmax fed back,
// until `steps` positions or a sampled BOS. tokens: the emitted tokens; tokens_per_second as run.c
// reports it ((positions - 1) / seconds from the first emission on).
struct BaselineRun {
  std::vector<int> tokens;
  double tokens_per_second = 0;
};
BaselineRun baseline_greedy(LmBaseline& model, int steps);

}  // namespace strata::bench
