// lm/model.cpp: the decoder's forward on strata ops, batched over the tokens of one call.
#include "model.h"

#include <cmath>
#include <limits>
#include <vector>

#include <strata/core/inference_mode.h>
#include <strata/core/util/error.h>
#include <strata/modes/scaled_tensor.h>
#include <strata/ops/functions.h>

#include "hf_checkpoint.h"
#include "int8_weights.h"
#include "llama2c_checkpoint.h"
#include "module_scope.h"

namespace lm {

using strata::Tensor;

// A folder with a config.json is a Hugging Face checkpoint; anything else a llama2.c .bin.
Model Model::load(const std::string& path, bool int8) {
  Weights w = is_hf_folder(path) ? read_hf_checkpoint(path) : read_llama2c_checkpoint(path);
  return Model(int8 ? quantize_to_int8(std::move(w)) : std::move(w));
}

// Note [The KV cache is one allocation]
// The keys and values of every layer and position live in two tensors made once, zeroed, at
// [n_layers, n_kv_heads, seq_len, head_size]: a layer's heads are contiguous runs of positions, so
// the attention of a step reads positions 0 .. pos of a head as one strided matrix (no gather, no
// copy), and a call writes its n new positions with one copy_ per layer and tensor. Made under
// InferenceMode, so those writes bump no version counter.
Model::Model(Weights weights) : weights_(std::move(weights)) {
  const strata::InferenceMode guard;
  const Config& c = config();
  STRATA_CHECK(static_cast<std::int64_t>(weights_.layers.size()) == c.n_layers, weights_.source, ": ",
               weights_.layers.size(), " layers of weights for a config of ", c.n_layers);
  for (const LayerWeights& w : weights_.layers)
    transposed_.push_back({w.wq.t(), w.wk.t(), w.wv.t(), w.wo.t(), w.w1.t(), w.w2.t(), w.w3.t()});
  output_t_ = weights_.output.t();
  const strata::TensorOptions f32{strata::ScalarType::Float32, std::nullopt};
  key_cache_ = strata::zeros({c.n_layers, c.n_kv_heads, c.seq_len, c.head_size()}, f32);
  value_cache_ = strata::zeros({c.n_layers, c.n_kv_heads, c.seq_len, c.head_size()}, f32);
  rotary_ = Rotary(c, weights_.rotary_layout);
}

// x * rsqrt(mean(x^2) + eps) * weight over the last dimension, as llama2.c's model.py writes RMSNorm.
Tensor Model::rms_norm(const Tensor& x, const Tensor& weight) const {
  const Tensor inv = (x.pow(2).mean({-1}, true) + config().rms_eps).rsqrt();
  Tensor out = x * inv;
  out *= weight;
  return out;
}

Tensor Model::forward(std::span<const int> tokens, std::int64_t pos, Logits which) {
  const strata::InferenceMode guard;
  const ModuleScope model_scope("Transformer");  // Note [The model's modules are scopes, not nn::Modules]
  const Config& c = config();
  const auto n = static_cast<std::int64_t>(tokens.size());
  STRATA_CHECK(n > 0, "lm::Model::forward: no tokens");
  STRATA_CHECK(pos >= 0 && pos <= c.seq_len - n, "lm::Model::forward: positions ", pos, " to ", pos + n - 1,
               " do not fit the model's sequence length ", c.seq_len);
  std::vector<std::int64_t> id(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const int t = tokens[static_cast<std::size_t>(i)];
    STRATA_CHECK(t >= 0 && t < c.vocab_size, "lm::Model::forward: token ", t, " at position ", pos + i,
                 " is outside the vocabulary [0, ", c.vocab_size, ")");
    id[static_cast<std::size_t>(i)] = t;
  }
  // A literal, so that a FakeTensorMode makes it a fake (Note [A tensor from values is lifted]).
  const Tensor ids = strata::tensor(id);
  // The causal mask of a batched call: token i (position pos + i) sees positions 0 .. pos + i.
  Tensor mask;
  if (n > 1)
    mask = strata::ones({n, pos + n}, {strata::ScalarType::Bool, std::nullopt}).triu(pos + 1);
  ModuleScope part("tok_embeddings");
  Tensor x = strata::embedding(weights_.embed, ids);  // [n, dim], a fresh tensor the layers update
  part.close();
  for (std::size_t l = 0; l < weights_.layers.size(); ++l) layer(l, x, pos, mask);
  if (which == Logits::Last && n > 1) x = x.narrow(0, n - 1, 1);
  part.next("norm");
  const Tensor normed = rms_norm(x, weights_.final_norm);
  part.next("output");
  const Tensor logits = strata::mm(normed, output_t_);
  return which == Logits::Last ? logits.view({c.vocab_size}) : logits;
}

// One decoder layer on x [n, dim], in place: x += attention(norm(x)); x += ffn(norm(x)).
void Model::layer(std::size_t l, const Tensor& x, std::int64_t pos, const Tensor& mask) {
  const Config& c = config();
  const LayerWeights& w = weights_.layers[l];
  const Transposed& wt = transposed_[l];
  const std::int64_t n = x.size(0), hs = c.head_size();
  const ModuleScope block("layers", static_cast<std::int64_t>(l));

  ModuleScope part("attention_norm");
  const Tensor h = rms_norm(x, w.attn_norm);
  part.next("attention");
  const Tensor q = rotary_.apply(strata::mm(h, wt.wq), pos, c.n_heads);
  const Tensor k = rotary_.apply(strata::mm(h, wt.wk), pos, c.n_kv_heads);
  const Tensor v = strata::mm(h, wt.wv);
  const auto li = static_cast<std::int64_t>(l);
  key_cache_.select(0, li).narrow(1, pos, n).copy_(k.view({n, c.n_kv_heads, hs}).transpose(0, 1));
  value_cache_.select(0, li).narrow(1, pos, n).copy_(v.view({n, c.n_kv_heads, hs}).transpose(0, 1));
  const Tensor attended = strata::mm(attention(l, q, pos, mask), wt.wo);
  part.close();
  x.add_(attended);

  part.next("ffn_norm");
  const Tensor h2 = rms_norm(x, w.ffn_norm);
  part.next("feed_forward");
  Tensor gate = strata::silu(strata::mm(h2, wt.w1));
  gate *= strata::mm(h2, wt.w3);
  const Tensor ffn = strata::mm(gate, wt.w2);
  part.close();
  x.add_(ffn);
}

// Note [Grouped heads share one product]
// Query head h reads key/value head h / group (group = n_heads / n_kv_heads, run.c's kv_mul). With
// q's heads viewed as [n_kv_heads, group, hs], the `group` queries of one key/value head are the rows
// of one matrix, so one bmm over the n_kv_heads batches scores them all against the cached keys
// [n_kv_heads, S, hs] (transposed, read in place): no key or value is repeated. A decoding step
// (n == 1) views q as that matrix without a copy; a batched call permutes q to [n_kv_heads, group * n,
// hs] (one copy) and masks positions after each token's own.
Tensor Model::attention(std::size_t l, const Tensor& q, std::int64_t pos, const Tensor& mask) const {
  const Config& c = config();
  const std::int64_t n = q.size(0), hs = c.head_size(), kv = c.n_kv_heads, group = c.n_heads / c.n_kv_heads;
  const std::int64_t seen = pos + n;
  const auto li = static_cast<std::int64_t>(l);
  const Tensor keys = key_cache_.select(0, li).narrow(1, 0, seen);      // [kv, seen, hs]
  const Tensor values = value_cache_.select(0, li).narrow(1, 0, seen);  // [kv, seen, hs]
  const Tensor queries = n == 1 ? q.view({kv, group, hs})
                                : q.view({n, kv, group, hs}).permute({1, 2, 0, 3}).reshape({kv, group * n, hs});
  Tensor scores = strata::bmm(queries, keys.transpose(1, 2));  // [kv, group * n, seen]
  strata::div_(scores, std::sqrt(static_cast<double>(hs)));
  if (n > 1) scores.view({kv, group, n, seen}).masked_fill_(mask, -std::numeric_limits<double>::infinity());
  const Tensor out = strata::bmm(scores.softmax(-1), values);  // [kv, group * n, hs]
  if (n == 1) return out.view({1, c.n_heads * hs});
  return out.view({kv, group, n, hs}).permute({2, 0, 1, 3}).reshape({n, c.n_heads * hs});
}

namespace {

// The bytes a tensor's values take: a grouped ScaledTensor's int8 values and float32 scales.
std::uint64_t bytes_of(const Tensor& t) {
  const strata::tracer::ScaledTensor* s = strata::tracer::ScaledTensor::of(t);
  if (s) return static_cast<std::uint64_t>(s->data().numel() + 4 * s->scale().numel());
  return static_cast<std::uint64_t>(t.numel()) * strata::element_size(t.dtype());
}

}  // namespace

std::uint64_t Model::weight_bytes_per_token() const {
  const Config& c = config();
  std::uint64_t bytes = bytes_of(weights_.embed) / static_cast<std::uint64_t>(c.vocab_size);  // one row
  for (const LayerWeights& w : weights_.layers)
    for (const Tensor* t : {&w.attn_norm, &w.wq, &w.wk, &w.wv, &w.wo, &w.ffn_norm, &w.w1, &w.w2, &w.w3}) bytes += bytes_of(*t);
  return bytes + bytes_of(weights_.final_norm) + bytes_of(weights_.output);
}

std::uint64_t Model::kv_cache_bytes_per_token() const {
  const Config& c = config();
  const std::uint64_t per_position = static_cast<std::uint64_t>(c.n_layers) * static_cast<std::uint64_t>(c.kv_dim());
  return 2 * per_position * strata::element_size(key_cache_.dtype());  // keys and values
}

}  // namespace lm
