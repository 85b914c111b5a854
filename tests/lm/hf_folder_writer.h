// tests/lm/hf_folder_writer.h: writes docs/lm.md's deterministic weights as a Hugging Face Llama folder
// (config.json, model.safetensors in float32, float16 or bfloat16, and optionally a tokenizer.model),
// with q_proj's and k_proj's rows permuted from Meta's rotary layout to Hugging Face's as their
// conversion script permutes them, so that the folder and the llama2.c `.bin` of a config hold the
// same model.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <strata/strata.h>

#include "synthetic_weights.h"

namespace lm_synthetic {

// Meta's rows [heads * hs, cols] with rotary pairs (2j, 2j + 1) -> Hugging Face's, pairs (j, j + hs/2).
inline std::vector<float> permute_meta_to_hf(const std::vector<float>& w, std::int64_t heads, std::int64_t hs,
                                             std::int64_t cols) {
  std::vector<float> out(w.size());
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t j = 0; j < hs / 2; ++j)
      for (std::int64_t r = 0; r < 2; ++r) {
        const std::int64_t meta_row = h * hs + 2 * j + r, hf_row = h * hs + r * (hs / 2) + j;
        std::copy_n(w.begin() + meta_row * cols, cols, out.begin() + hf_row * cols);
      }
  return out;
}

inline nlohmann::json hf_config_json(const lm::Config& c, strata::ScalarType dtype) {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_act", "silu"},
          {"hidden_size", c.dim},
          {"intermediate_size", c.hidden_dim},
          {"num_hidden_layers", c.n_layers},
          {"num_attention_heads", c.n_heads},
          {"num_key_value_heads", c.n_kv_heads},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.seq_len},
          {"rms_norm_eps", c.rms_eps},
          {"rope_theta", c.rope_theta},
          {"rope_scaling", nullptr},
          {"tie_word_embeddings", c.tied_output},
          {"torch_dtype", std::string(strata::dtype_name(dtype))}};
}

// The folder's tensors by Hugging Face name, in `dtype` (rounded from the float32 weights).
inline strata::TensorDict hf_tensors(const lm::Config& c, strata::ScalarType dtype) {
  strata::TensorDict tensors;
  auto add = [&](const std::string& name, std::vector<float> values, std::vector<std::int64_t> shape) {
    strata::Tensor t = strata::from_blob(values.data(), shape).clone();
    tensors.emplace(name, dtype == strata::kFloat32 ? t : t.to(dtype));
  };
  const std::int64_t hs = c.head_size(), q = c.n_heads * hs, kv = c.kv_dim();
  add("model.embed_tokens.weight", matrix("model.embed_tokens.weight", c.vocab_size, c.dim), {c.vocab_size, c.dim});
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    auto mat = [&](const char* rest, std::int64_t rows, std::int64_t cols) {
      return matrix(layer_name(l, rest), rows, cols);
    };
    add(layer_name(l, "input_layernorm.weight"), norm(layer_name(l, "input_layernorm.weight"), c.dim), {c.dim});
    add(layer_name(l, "self_attn.q_proj.weight"), permute_meta_to_hf(mat("self_attn.q_proj.weight", q, c.dim), c.n_heads, hs, c.dim),
        {q, c.dim});
    add(layer_name(l, "self_attn.k_proj.weight"),
        permute_meta_to_hf(mat("self_attn.k_proj.weight", kv, c.dim), c.n_kv_heads, hs, c.dim), {kv, c.dim});
    add(layer_name(l, "self_attn.v_proj.weight"), mat("self_attn.v_proj.weight", kv, c.dim), {kv, c.dim});
    add(layer_name(l, "self_attn.o_proj.weight"), mat("self_attn.o_proj.weight", c.dim, q), {c.dim, q});
    add(layer_name(l, "post_attention_layernorm.weight"), norm(layer_name(l, "post_attention_layernorm.weight"), c.dim),
        {c.dim});
    add(layer_name(l, "mlp.gate_proj.weight"), mat("mlp.gate_proj.weight", c.hidden_dim, c.dim), {c.hidden_dim, c.dim});
    add(layer_name(l, "mlp.up_proj.weight"), mat("mlp.up_proj.weight", c.hidden_dim, c.dim), {c.hidden_dim, c.dim});
    add(layer_name(l, "mlp.down_proj.weight"), mat("mlp.down_proj.weight", c.dim, c.hidden_dim), {c.dim, c.hidden_dim});
  }
  add("model.norm.weight", norm("model.norm.weight", c.dim), {c.dim});
  if (!c.tied_output) add("lm_head.weight", matrix("lm_head.weight", c.vocab_size, c.dim), {c.vocab_size, c.dim});
  return tensors;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  STRATA_CHECK(out.good(), "cannot write ", path.string());
}

// Writes the folder (created if missing); `tokenizer_model`, when not empty, is copied in as
// tokenizer.model.
inline void write_hf_folder(const std::filesystem::path& folder, const lm::Config& c, strata::ScalarType dtype,
                            const std::string& tokenizer_model = {}) {
  std::filesystem::create_directories(folder);
  write_text(folder / "config.json", hf_config_json(c, dtype).dump(2));
  strata::save_safetensors((folder / "model.safetensors").string(), hf_tensors(c, dtype));
  if (!tokenizer_model.empty())
    std::filesystem::copy_file(tokenizer_model, folder / "tokenizer.model",
                               std::filesystem::copy_options::overwrite_existing);
}

}  // namespace lm_synthetic
