// lm/hf_checkpoint.cpp: reading a Hugging Face Llama folder into lm::Weights.
#include "hf_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <strata/core/util/error.h>
#include <strata/nn/safetensors.h>
#include <strata/ops/functions.h>

namespace lm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  STRATA_CHECK(in, "strata-lm: cannot read ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t positive_int(const json& config, const char* key, const std::string& label) {
  STRATA_CHECK(config.contains(key), label, ": config.json has no \"", key, "\"");
  const json& value = config.at(key);
  STRATA_CHECK(value.is_number_integer() && value.get<std::int64_t>() > 0, label, ": config.json's \"", key,
               "\" must be a positive integer, got ", value.dump());
  return value.get<std::int64_t>();
}

double number_or(const json& config, const char* key, double fallback, const std::string& label) {
  if (!config.contains(key) || config.at(key).is_null()) return fallback;
  STRATA_CHECK(config.at(key).is_number(), label, ": config.json's \"", key, "\" must be a number, got ",
               config.at(key).dump());
  return config.at(key).get<double>();
}

bool bool_or(const json& config, const char* key, bool fallback, const std::string& label) {
  if (!config.contains(key)) return fallback;
  STRATA_CHECK(config.at(key).is_boolean(), label, ": config.json's \"", key, "\" must be true or false, got ",
               config.at(key).dump());
  return config.at(key).get<bool>();
}

// The model's tensors by name, from model.safetensors or from the shards its index lists.
strata::TensorDict read_tensors(const fs::path& folder) {
  const fs::path single = folder / "model.safetensors";
  if (fs::exists(single)) return strata::load_safetensors(single.string()).tensors;
  const fs::path index_path = folder / "model.safetensors.index.json";
  STRATA_CHECK(fs::exists(index_path), "strata-lm: ", folder.string(),
               " has neither model.safetensors nor model.safetensors.index.json");
  json index;
  try {
    index = json::parse(read_text(index_path));
  } catch (const json::exception& e) {
    strata::detail::throw_error(strata::detail::str_cat("strata-lm: ", index_path.string(), ": ", e.what()));
  }
  STRATA_CHECK(index.contains("weight_map") && index.at("weight_map").is_object(), "strata-lm: ",
               index_path.string(), " has no \"weight_map\" object");
  std::set<std::string> shards;
  for (const auto& entry : index.at("weight_map").items()) {
    STRATA_CHECK(entry.value().is_string(), "strata-lm: ", index_path.string(), ": the shard of ", entry.key(),
                 " is not a file name");
    shards.insert(entry.value().get<std::string>());
  }
  strata::TensorDict tensors;
  for (const std::string& shard : shards) {
    STRATA_CHECK(fs::path(shard).filename() == fs::path(shard), "strata-lm: ", index_path.string(),
                 ": shard \"", shard, "\" is not a file in the folder");
    for (auto& entry : strata::load_safetensors((folder / shard).string()).tensors) {
      const std::string& name = entry.first;  // not a structured binding: STRATA_CHECK's message captures it (clang 14)
      const std::string& wanted = index.at("weight_map").value(name, std::string());
      STRATA_CHECK(wanted == shard, "strata-lm: ", (folder / shard).string(), " holds ", name,
                   ", which the index places in ", wanted.empty() ? "no shard" : wanted);
      tensors.emplace(name, std::move(entry.second));
    }
  }
  return tensors;
}

// Note [Half checkpoints are widened at load]
// strata's matrix kernels compute in float32, so a float16 or bfloat16 tensor is converted once, here,
// to a float32 tensor of its own, and the half-precision mapping is released as soon as the last of
// its tensors is converted. The price is memory: the weights take twice the file's bytes, where a
// float32 checkpoint takes none beyond its mapping. Decoding then reads float32 weights, twice the
// bytes per token a half-precision kernel would, which is the cost of keeping one matmul path.
class TensorTaker {
 public:
  TensorTaker(strata::TensorDict tensors, std::string label) : tensors_(std::move(tensors)), label_(std::move(label)) {}

  strata::Tensor take(const std::string& name, std::vector<std::int64_t> shape) {
    auto found = tensors_.find(name);
    STRATA_CHECK(found != tensors_.end(), "strata-lm: ", label_, " has no tensor ", name);
    strata::Tensor tensor = std::move(found->second);
    tensors_.erase(found);
    const auto sizes = tensor.sizes();
    STRATA_CHECK(std::vector<std::int64_t>(sizes.begin(), sizes.end()) == shape, "strata-lm: ", label_, ": ", name,
                 " has shape ", tensor.sizes(), ", expected ", strata::IntArrayRef(shape), " from config.json");
    const strata::ScalarType dtype = tensor.dtype();
    STRATA_CHECK(dtype == strata::kFloat32 || dtype == strata::kFloat16 || dtype == strata::kBFloat16,
                 "strata-lm: ", label_, ": ", name, " is ", strata::dtype_name(dtype),
                 ", expected float32, float16 or bfloat16");
    return dtype == strata::kFloat32 ? tensor.contiguous() : tensor.to(strata::kFloat32).contiguous();
  }

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

  // Nothing may be left but buffers the model recomputes.
  void check_all_taken() const {
    for (const auto& entry : tensors_) {
      const std::string& name = entry.first;
      STRATA_CHECK(name.ends_with("rotary_emb.inv_freq"), "strata-lm: ", label_, " holds ", name,
                   ", which a Llama model of this config.json does not have");
    }
  }

 private:
  strata::TensorDict tensors_;
  std::string label_;
};

}  // namespace

bool is_hf_folder(const std::string& path) {
  std::error_code ignored;
  return fs::is_directory(path, ignored) && fs::exists(fs::path(path) / "config.json", ignored);
}

Config parse_hf_config(const std::string& json_text, const std::string& label) {
  json config;
  try {
    config = json::parse(json_text);
  } catch (const json::exception& e) {
    strata::detail::throw_error(strata::detail::str_cat("strata-lm: ", label, ": ", e.what()));
  }
  STRATA_CHECK(config.is_object(), label, ": config.json is not a JSON object");
  const auto require_string = [&](const char* key, const char* expected) {
    if (!config.contains(key)) return;
    STRATA_CHECK(config.at(key) == expected, "strata-lm: ", label, ": config.json's \"", key, "\" is ",
                 config.at(key).dump(), "; strata-lm runs \"", expected, "\"");
  };
  require_string("model_type", "llama");
  require_string("hidden_act", "silu");
  STRATA_CHECK(!config.contains("rope_scaling") || config.at("rope_scaling").is_null(), "strata-lm: ", label,
               ": config.json's \"rope_scaling\" is ", config.value("rope_scaling", json()).dump(),
               "; strata-lm runs unscaled rotary embeddings only");
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    STRATA_CHECK(!bool_or(config, key, false, label), "strata-lm: ", label, ": config.json's \"", key,
                 "\" is true; strata-lm's Llama has no biases");
  }
  Config c;
  c.dim = positive_int(config, "hidden_size", label);
  c.hidden_dim = positive_int(config, "intermediate_size", label);
  c.n_layers = positive_int(config, "num_hidden_layers", label);
  c.n_heads = positive_int(config, "num_attention_heads", label);
  c.n_kv_heads = config.contains("num_key_value_heads") && !config.at("num_key_value_heads").is_null()
                     ? positive_int(config, "num_key_value_heads", label)
                     : c.n_heads;
  c.vocab_size = positive_int(config, "vocab_size", label);
  c.seq_len = positive_int(config, "max_position_embeddings", label);
  c.rms_eps = number_or(config, "rms_norm_eps", 1e-6, label);
  c.rope_theta = number_or(config, "rope_theta", 10000.0, label);
  c.tied_output = bool_or(config, "tie_word_embeddings", false, label);
  STRATA_CHECK(c.dim % c.n_heads == 0 && c.head_size() % 2 == 0, "strata-lm: ", label, ": hidden_size ", c.dim,
               " must be num_attention_heads (", c.n_heads, ") times an even head size");
  STRATA_CHECK(c.n_heads % c.n_kv_heads == 0, "strata-lm: ", label, ": num_attention_heads ", c.n_heads,
               " must be a multiple of num_key_value_heads ", c.n_kv_heads);
  if (config.contains("head_dim") && !config.at("head_dim").is_null()) {
    STRATA_CHECK(positive_int(config, "head_dim", label) == c.head_size(), "strata-lm: ", label,
                 ": config.json's \"head_dim\" is ", config.at("head_dim").dump(), "; strata-lm needs hidden_size / ",
                 "num_attention_heads = ", c.head_size());
  }
  STRATA_CHECK(c.rms_eps > 0 && c.rope_theta > 0, "strata-lm: ", label,
               ": rms_norm_eps and rope_theta must be positive");
  return c;
}

Config read_hf_config(const std::string& path) {
  std::error_code ec;
  STRATA_CHECK(!fs::is_directory(path, ec), "strata-lm: ", path, " is a folder, expected a config.json file");
  return parse_hf_config(read_text(path), path);
}

Weights read_hf_checkpoint(const std::string& folder) {
  const fs::path root(folder);
  const std::string config_path = (root / "config.json").string();
  Weights w;
  w.config = parse_hf_config(read_text(config_path), config_path);
  w.rotary_layout = RotaryLayout::HalfSplit;
  w.source = folder;
  const Config& c = w.config;
  TensorTaker taker(read_tensors(root), folder);
  const std::int64_t hs = c.head_size();
  w.embed = taker.take("model.embed_tokens.weight", {c.vocab_size, c.dim});
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights layer;
    layer.attn_norm = taker.take(p + "input_layernorm.weight", {c.dim});
    layer.wq = taker.take(p + "self_attn.q_proj.weight", {c.n_heads * hs, c.dim});
    layer.wk = taker.take(p + "self_attn.k_proj.weight", {c.n_kv_heads * hs, c.dim});
    layer.wv = taker.take(p + "self_attn.v_proj.weight", {c.n_kv_heads * hs, c.dim});
    layer.wo = taker.take(p + "self_attn.o_proj.weight", {c.dim, c.n_heads * hs});
    layer.ffn_norm = taker.take(p + "post_attention_layernorm.weight", {c.dim});
    layer.w1 = taker.take(p + "mlp.gate_proj.weight", {c.hidden_dim, c.dim});
    layer.w2 = taker.take(p + "mlp.down_proj.weight", {c.dim, c.hidden_dim});
    layer.w3 = taker.take(p + "mlp.up_proj.weight", {c.hidden_dim, c.dim});
    w.layers.push_back(std::move(layer));
  }
  w.final_norm = taker.take("model.norm.weight", {c.dim});
  if (c.tied_output) {
    w.output = w.embed;
    // Some exports of tied models store the head anyway: it is the embedding's copy, and unused.
    if (taker.has("lm_head.weight")) taker.take("lm_head.weight", {c.vocab_size, c.dim});
  } else {
    w.output = taker.take("lm_head.weight", {c.vocab_size, c.dim});
  }
  taker.check_all_taken();
  return w;
}

}  // namespace lm
