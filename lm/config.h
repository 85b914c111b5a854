// lm/config.h: a Llama-2-architecture model's hyperparameters, whatever checkpoint they came from
// (llama2.c's 7-int header today; a Hugging Face config.json can fill the same struct).
#pragma once

#include <cstdint>

namespace lm {

struct Config {
  std::int64_t dim = 0;         // the residual stream's width
  std::int64_t hidden_dim = 0;  // the feed-forward's inner width
  std::int64_t n_layers = 0;
  std::int64_t n_heads = 0;     // query heads
  std::int64_t n_kv_heads = 0;  // key/value heads; n_heads is a multiple of it (grouped-query attention)
  std::int64_t vocab_size = 0;
  std::int64_t seq_len = 0;     // the longest sequence the KV cache holds
  bool tied_output = true;      // the output head is the token embedding (llama2.c's shared classifier)
  double rope_theta = 10000.0;
  double rms_eps = 1e-5;

  std::int64_t head_size() const { return dim / n_heads; }
  std::int64_t kv_dim() const { return n_kv_heads * head_size(); }
};

}  // namespace lm
