// lm/model.h: a Llama-2-architecture decoder on strata's ops (embedding, RMSNorm, rotary embedding,
// grouped-query attention over a KV cache, SwiGLU, the output head), run under InferenceMode.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <strata/core/tensor.h>

#include "config.h"
#include "rotary.h"
#include "weights.h"

namespace lm {

enum class Logits {
  Last,  // forward returns the last token's logits, [vocab]
  All,   // forward returns every token's, [n, vocab]
};

class Model {
 public:
  // Reads a checkpoint (llama2.c's float32 `.bin` or int8 version-2 `.bin`, or a Hugging Face folder)
  // and allocates the KV cache (seq_len positions). int8: float weights are quantized at load
  // (lm/int8_weights.h), so the model runs the int8 path a version-2 file runs.
  static Model load(const std::string& path, bool int8 = false);
  explicit Model(Weights weights);

  const Config& config() const { return weights_.config; }
  const Weights& weights() const { return weights_; }

  // Runs `tokens` at positions pos .. pos + n - 1 and returns their logits (float32). The KV cache must
  // hold positions 0 .. pos - 1 from earlier calls; this call writes the n new ones. Several tokens
  // make one batched pass (matrix-matrix products, a causal mask); one token, matrix-vector products.
  // The result is valid until the next forward. Errors: tokens outside [0, vocab), an empty span,
  // positions past seq_len.
  strata::Tensor forward(std::span<const int> tokens, std::int64_t pos, Logits which = Logits::Last);

  // Bytes of weights read for one decoded token (each matrix and norm once, int8 values and their
  // scales for int8 weights; the embedding row only).
  std::uint64_t weight_bytes_per_token() const;
  // Bytes of KV cache one position takes: its key and value in every layer.
  std::uint64_t kv_cache_bytes_per_token() const;

 private:
  // The products' right operands, W^T as views of the weights (x @ W^T reads W in place).
  struct Transposed {
    strata::Tensor wq, wk, wv, wo, w1, w2, w3;
  };

  void layer(std::size_t l, const strata::Tensor& x, std::int64_t pos, const strata::Tensor& mask);
  strata::Tensor attention(std::size_t l, const strata::Tensor& q, std::int64_t pos, const strata::Tensor& mask) const;
  strata::Tensor rms_norm(const strata::Tensor& x, const strata::Tensor& weight) const;

  Weights weights_;
  std::vector<Transposed> transposed_;
  strata::Tensor output_t_;     // [dim, vocab]
  strata::Tensor key_cache_;    // [n_layers, n_kv_heads, seq_len, head_size]
  strata::Tensor value_cache_;  // [n_layers, n_kv_heads, seq_len, head_size]
  Rotary rotary_;
};

}  // namespace lm
