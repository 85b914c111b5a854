// tests/lm/reference_forward.h: the model's forward as plain loops over the generator's weights
// (tests/lm/synthetic_weights.h, not the file), one token at a time as run.c computes it, in double:
// what lm::Model's logits are checked against, independently of strata's ops and of the .bin layout.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "synthetic_weights.h"

namespace lm_reference {

using Vec = std::vector<double>;

struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> w;
  Vec times(const Vec& x) const {  // W @ x
    Vec out(static_cast<std::size_t>(rows), 0.0);
    for (std::int64_t i = 0; i < rows; ++i) {
      double acc = 0;
      for (std::int64_t j = 0; j < cols; ++j) acc += static_cast<double>(w[static_cast<std::size_t>(i * cols + j)]) * x[static_cast<std::size_t>(j)];
      out[static_cast<std::size_t>(i)] = acc;
    }
    return out;
  }
};

inline Matrix matrix(const std::string& name, std::int64_t rows, std::int64_t cols) {
  return {rows, cols, lm_synthetic::matrix(name, rows, cols)};
}

inline Vec rms_norm(const Vec& x, const std::vector<float>& weight, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * weight[i];
  return out;
}

// Rotates the pairs (2i, 2i + 1) of each head of v (Meta's layout) for position pos.
inline void rotate(Vec& v, std::int64_t head_size, std::int64_t pos, double theta) {
  for (std::size_t i = 0; i < v.size(); i += 2) {
    const auto pair = static_cast<double>(i % static_cast<std::size_t>(head_size));
    const double angle = static_cast<double>(pos) * std::pow(theta, -pair / static_cast<double>(head_size));
    const double a = v[i], b = v[i + 1];
    v[i] = a * std::cos(angle) - b * std::sin(angle);
    v[i + 1] = a * std::sin(angle) + b * std::cos(angle);
  }
}

// The logits after each token of `tokens` (fed at positions 0, 1, ...), [n][vocab].
inline std::vector<Vec> forward(const lm::Config& c, const std::vector<int>& tokens) {
  using lm_synthetic::layer_name;
  const std::int64_t hs = c.head_size(), q_dim = c.n_heads * hs, kv_dim = c.kv_dim();
  const std::int64_t group = c.n_heads / c.n_kv_heads;
  const std::vector<float> embed = lm_synthetic::matrix("model.embed_tokens.weight", c.vocab_size, c.dim);
  struct Layer {
    std::vector<float> attn_norm, ffn_norm;
    Matrix wq, wk, wv, wo, w1, w2, w3;
  };
  std::vector<Layer> layers;
  for (std::int64_t l = 0; l < c.n_layers; ++l)
    layers.push_back({lm_synthetic::norm(layer_name(l, "input_layernorm.weight"), c.dim),
                      lm_synthetic::norm(layer_name(l, "post_attention_layernorm.weight"), c.dim),
                      matrix(layer_name(l, "self_attn.q_proj.weight"), q_dim, c.dim),
                      matrix(layer_name(l, "self_attn.k_proj.weight"), kv_dim, c.dim),
                      matrix(layer_name(l, "self_attn.v_proj.weight"), kv_dim, c.dim),
                      matrix(layer_name(l, "self_attn.o_proj.weight"), c.dim, q_dim),
                      matrix(layer_name(l, "mlp.gate_proj.weight"), c.hidden_dim, c.dim),
                      matrix(layer_name(l, "mlp.down_proj.weight"), c.dim, c.hidden_dim),
                      matrix(layer_name(l, "mlp.up_proj.weight"), c.hidden_dim, c.dim)});
  const std::vector<float> final_norm = lm_synthetic::norm("model.norm.weight", c.dim);
  const Matrix head = c.tied_output ? Matrix{c.vocab_size, c.dim, embed} : matrix("lm_head.weight", c.vocab_size, c.dim);

  std::vector<std::vector<Vec>> keys(layers.size()), values(layers.size());  // [layer][pos]
  std::vector<Vec> logits;
  for (std::size_t pos = 0; pos < tokens.size(); ++pos) {
    Vec x(static_cast<std::size_t>(c.dim));
    for (std::int64_t i = 0; i < c.dim; ++i) x[static_cast<std::size_t>(i)] = embed[static_cast<std::size_t>(tokens[pos] * c.dim + i)];
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const Layer& w = layers[l];
      const Vec h = rms_norm(x, w.attn_norm, c.rms_eps);
      Vec q = w.wq.times(h), k = w.wk.times(h);
      rotate(q, hs, static_cast<std::int64_t>(pos), c.rope_theta);
      rotate(k, hs, static_cast<std::int64_t>(pos), c.rope_theta);
      keys[l].push_back(k);
      values[l].push_back(w.wv.times(h));
      Vec att(static_cast<std::size_t>(q_dim), 0.0);
      for (std::int64_t head_index = 0; head_index < c.n_heads; ++head_index) {
        const std::int64_t kv = head_index / group;
        Vec scores(pos + 1);
        double max_score = -INFINITY;
        for (std::size_t t = 0; t <= pos; ++t) {
          double s = 0;
          for (std::int64_t i = 0; i < hs; ++i)
            s += q[static_cast<std::size_t>(head_index * hs + i)] * keys[l][t][static_cast<std::size_t>(kv * hs + i)];
          scores[t] = s / std::sqrt(static_cast<double>(hs));
          max_score = std::max(max_score, scores[t]);
        }
        double sum = 0;
        for (double& s : scores) sum += (s = std::exp(s - max_score));
        for (std::size_t t = 0; t <= pos; ++t)
          for (std::int64_t i = 0; i < hs; ++i)
            att[static_cast<std::size_t>(head_index * hs + i)] += scores[t] / sum * values[l][t][static_cast<std::size_t>(kv * hs + i)];
      }
      const Vec o = w.wo.times(att);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      const Vec h2 = rms_norm(x, w.ffn_norm, c.rms_eps);
      Vec gate = w.w1.times(h2);
      const Vec up = w.w3.times(h2);
      for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const Vec down = w.w2.times(gate);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
    }
    logits.push_back(head.times(rms_norm(x, final_norm, c.rms_eps)));
  }
  return logits;
}

// docs/lm.md's logits prompt: BOS, then (7 j + 3) % (vocab - 3) + 3 for j = 1 .. 23.
inline std::vector<int> spec_prompt(const lm::Config& c) {
  std::vector<int> tokens{1};
  for (int j = 1; j < 24; ++j) tokens.push_back(static_cast<int>((7 * j + 3) % (c.vocab_size - 3) + 3));
  return tokens;
}

}  // namespace lm_reference
