// tests/lm/synthetic_weights.h: the deterministic weights of docs/lm.md's configs (the C++ side of the
// generator scripts/reference/lm_*.py implements bit for bit) and a writer of llama2.c float32 `.bin`
// checkpoints, so that no checkpoint is committed: tests and benchmarks write the file they read.
//   splitmix64(x), name_seed(name) = FNV-1a 64 of the name,
//   u(name, i) = float32(splitmix64(name_seed(name) + i) >> 40) * 2^-23 - 1   (exact, in [-1, 1))
//   2-D [out, in]: u * float32(0.5 / sqrt(in)); 1-D norm: 1 + 0.125 * u   (float32 arithmetic)
// with i the row-major index in the tensor's Hugging Face shape and q/k rows in Meta's layout.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strata/core/util/error.h>

#include "../../lm/config.h"

namespace lm_synthetic {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

inline std::uint64_t name_seed(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : name) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// u(name, i) for i = 0 .. n - 1.
inline std::vector<float> uniform(std::string_view name, std::int64_t n) {
  const std::uint64_t seed = name_seed(name);
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] =
        static_cast<float>(splitmix64(seed + static_cast<std::uint64_t>(i)) >> 40) * 0x1p-23f - 1.0f;
  return out;
}

// A 2-D weight [rows, cols], row-major.
inline std::vector<float> matrix(std::string_view name, std::int64_t rows, std::int64_t cols) {
  std::vector<float> w = uniform(name, rows * cols);
  const auto scale = static_cast<float>(0.5 / std::sqrt(static_cast<double>(cols)));
  for (float& x : w) x = x * scale;
  return w;
}

// A norm's weight [n].
inline std::vector<float> norm(std::string_view name, std::int64_t n) {
  std::vector<float> w = uniform(name, n);
  for (float& x : w) x = 1.0f + 0.125f * x;
  return w;
}

inline lm::Config make_config(std::int64_t dim, std::int64_t hidden, std::int64_t layers, std::int64_t heads,
                              std::int64_t kv_heads, std::int64_t vocab, std::int64_t seq_len, bool tied) {
  lm::Config c;
  c.dim = dim, c.hidden_dim = hidden, c.n_layers = layers, c.n_heads = heads, c.n_kv_heads = kv_heads;
  c.vocab_size = vocab, c.seq_len = seq_len, c.tied_output = tied;
  return c;
}

// docs/lm.md's configs.
inline lm::Config tiny() { return make_config(64, 192, 2, 4, 4, 512, 64, true); }
inline lm::Config tiny_gqa() { return make_config(64, 192, 2, 8, 2, 512, 64, false); }
inline lm::Config stories15m() { return make_config(288, 768, 6, 6, 6, 32000, 256, true); }
inline lm::Config config_named(std::string_view name) {
  if (name == "tiny") return tiny();
  if (name == "tiny_gqa") return tiny_gqa();
  if (name == "stories15M") return stories15m();
  throw std::invalid_argument("unknown synthetic config " + std::string(name) + " (tiny, tiny_gqa, stories15M)");
}

inline std::string layer_name(std::int64_t l, std::string_view rest) {
  return "model.layers." + std::to_string(l) + "." + std::string(rest);
}

// Writes config's weights as llama2.c's version-0 float32 `.bin`: the 7-int header (vocab_size negative
// when the classifier is separate), then run.c's blocks in its order (each block all layers of one
// weight), the two legacy rotary tables as zeros, then lm_head when not tied.
inline void write_llama2c_bin(const std::string& path, const lm::Config& c) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  STRATA_CHECK(f != nullptr, "cannot write ", path);
  auto put = [&](const std::vector<float>& v) { std::fwrite(v.data(), sizeof(float), v.size(), f); };
  const std::int32_t header[7] = {static_cast<std::int32_t>(c.dim),        static_cast<std::int32_t>(c.hidden_dim),
                                  static_cast<std::int32_t>(c.n_layers),   static_cast<std::int32_t>(c.n_heads),
                                  static_cast<std::int32_t>(c.n_kv_heads),
                                  static_cast<std::int32_t>(c.tied_output ? c.vocab_size : -c.vocab_size),
                                  static_cast<std::int32_t>(c.seq_len)};
  std::fwrite(header, sizeof header, 1, f);
  const std::int64_t hs = c.head_size(), q = c.n_heads * hs, kv = c.kv_dim();
  put(matrix("model.embed_tokens.weight", c.vocab_size, c.dim));
  auto per_layer = [&](std::string_view rest, std::int64_t rows, std::int64_t cols) {
    for (std::int64_t l = 0; l < c.n_layers; ++l)
      put(cols == 0 ? norm(layer_name(l, rest), rows) : matrix(layer_name(l, rest), rows, cols));
  };
  per_layer("input_layernorm.weight", c.dim, 0);
  per_layer("self_attn.q_proj.weight", q, c.dim);
  per_layer("self_attn.k_proj.weight", kv, c.dim);
  per_layer("self_attn.v_proj.weight", kv, c.dim);
  per_layer("self_attn.o_proj.weight", c.dim, q);
  per_layer("post_attention_layernorm.weight", c.dim, 0);
  per_layer("mlp.gate_proj.weight", c.hidden_dim, c.dim);
  per_layer("mlp.down_proj.weight", c.dim, c.hidden_dim);
  per_layer("mlp.up_proj.weight", c.hidden_dim, c.dim);
  put(norm("model.norm.weight", c.dim));
  put(std::vector<float>(static_cast<std::size_t>(c.seq_len * hs), 0.0f));  // freq_cis_real and _imag
  if (!c.tied_output) put(matrix("lm_head.weight", c.vocab_size, c.dim));
  const bool ok = std::ferror(f) == 0;
  STRATA_CHECK(std::fclose(f) == 0 && ok, "cannot write ", path);
}

}  // namespace lm_synthetic
