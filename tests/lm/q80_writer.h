// tests/lm/q80_writer.h: writes docs/lm.md's deterministic weights as llama2.c's int8 version-2 `.bin`
// (export.py --version 2, what runq.c reads), with export.py's quantization written here on its own
// (not strata's), so that tests check strata's reader and quantizer against it:
//   per group of `group` consecutive values: s = max|w| / 127, q = round-half-even(w / s) (float32);
//   a 256-byte header (magic "ak42", version 2, seven int32, uint8 shared_classifier, int32 group
//   size at byte 37, zeros), the norms as float32, then per matrix its int8 values and float32 scales.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "synthetic_weights.h"

namespace lm_synthetic {

struct Q80 {
  std::vector<std::int8_t> values;
  std::vector<float> scales;
};

inline Q80 quantize_q80(const std::vector<float>& w, std::int64_t group) {
  Q80 out;
  for (std::size_t g = 0; g < w.size(); g += static_cast<std::size_t>(group)) {
    float amax = 0;
    for (std::size_t i = g; i < g + static_cast<std::size_t>(group); ++i) amax = std::max(amax, std::fabs(w[i]));
    const float scale = amax / 127.0f;
    out.scales.push_back(scale);
    for (std::size_t i = g; i < g + static_cast<std::size_t>(group); ++i)
      out.values.push_back(static_cast<std::int8_t>(scale == 0 ? 0.0f : std::nearbyint(w[i] / scale)));
  }
  return out;
}

// Writes config c's weights as a version-2 file with groups of `group` (export.py's 64 halved until it
// divides dim when 0) and the shared_classifier flag `shared` (c.tied_output when -1).
inline void write_llama2c_q80_bin(const std::string& path, const lm::Config& c, std::int64_t group = 0, int shared = -1) {
  if (group == 0)
    for (group = 64; c.dim % group != 0;) group /= 2;
  const bool tied = shared < 0 ? c.tied_output : shared != 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  STRATA_CHECK(f != nullptr, "cannot write ", path);
  unsigned char header[256] = {};
  const std::uint32_t magic = 0x616b3432;
  const std::int32_t version = 2, group32 = static_cast<std::int32_t>(group);
  const std::int32_t fields[7] = {static_cast<std::int32_t>(c.dim),      static_cast<std::int32_t>(c.hidden_dim),
                                  static_cast<std::int32_t>(c.n_layers), static_cast<std::int32_t>(c.n_heads),
                                  static_cast<std::int32_t>(c.n_kv_heads), static_cast<std::int32_t>(c.vocab_size),
                                  static_cast<std::int32_t>(c.seq_len)};
  std::memcpy(header, &magic, 4);
  std::memcpy(header + 4, &version, 4);
  std::memcpy(header + 8, fields, sizeof fields);
  header[36] = tied ? 1 : 0;
  std::memcpy(header + 37, &group32, 4);
  std::fwrite(header, 1, sizeof header, f);
  auto put_floats = [&](const std::vector<float>& v) { std::fwrite(v.data(), sizeof(float), v.size(), f); };
  auto put_q80 = [&](const std::vector<float>& v) {
    const Q80 q = quantize_q80(v, group);
    std::fwrite(q.values.data(), 1, q.values.size(), f);
    put_floats(q.scales);
  };
  for (const char* norm_name : {"input_layernorm.weight", "post_attention_layernorm.weight"})
    for (std::int64_t l = 0; l < c.n_layers; ++l) put_floats(norm(layer_name(l, norm_name), c.dim));
  put_floats(norm("model.norm.weight", c.dim));
  put_q80(matrix("model.embed_tokens.weight", c.vocab_size, c.dim));
  const std::int64_t q = c.n_heads * c.head_size(), kv = c.kv_dim();
  const struct {
    const char* name;
    std::int64_t rows, cols;
  } projections[] = {{"self_attn.q_proj.weight", q, c.dim},          {"self_attn.k_proj.weight", kv, c.dim},
                     {"self_attn.v_proj.weight", kv, c.dim},         {"self_attn.o_proj.weight", c.dim, q},
                     {"mlp.gate_proj.weight", c.hidden_dim, c.dim}, {"mlp.down_proj.weight", c.dim, c.hidden_dim},
                     {"mlp.up_proj.weight", c.hidden_dim, c.dim}};
  for (const auto& p : projections)
    for (std::int64_t l = 0; l < c.n_layers; ++l) put_q80(matrix(layer_name(l, p.name), p.rows, p.cols));
  if (!tied) put_q80(matrix(c.tied_output ? "model.embed_tokens.weight" : "lm_head.weight", c.vocab_size, c.dim));
  const bool ok = std::ferror(f) == 0;
  STRATA_CHECK(std::fclose(f) == 0 && ok, "cannot write ", path);
}

}  // namespace lm_synthetic
