// lm/hf_checkpoint.h: a Hugging Face Llama folder: config.json (LlamaForCausalLM's keys),
// model.safetensors (or shards listed by model.safetensors.index.json) with Hugging Face's tensor
// names, and tokenizer.model beside them (lm/sentencepiece_tokenizer.h reads it).
#pragma once

#include <string>

#include "config.h"
#include "weights.h"

namespace lm {

// Whether `path` is a folder holding a config.json (a Hugging Face checkpoint) rather than a file.
bool is_hf_folder(const std::string& path);

// config.json's text as a Config: hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads (default: num_attention_heads), vocab_size,
// max_position_embeddings (the KV cache's length), rms_norm_eps, rope_theta (default 10000),
// tie_word_embeddings (default false, as LlamaConfig). What this model cannot run (another
// model_type or hidden_act, rope_scaling, biases, a head_dim other than hidden_size / heads) is an
// error naming `label` and the key.
Config parse_hf_config(const std::string& json_text, const std::string& label);

// The config.json file at `path` (any name) as a Config, by parse_hf_config; an unreadable file is an
// error naming it.
Config read_hf_config(const std::string& path);

// Reads the folder: every tensor the config implies, with its exact shape, and nothing else (a
// rotary_emb.inv_freq buffer, which older exports saved, is ignored). float32 tensors stay in the
// file's mapping; float16 and bfloat16 tensors are converted to float32 once here (Note [Half
// checkpoints are widened at load], hf_checkpoint.cpp). The weights keep Hugging Face's rotary layout
// (RotaryLayout::HalfSplit): q_proj's and k_proj's rows are used as stored.
Weights read_hf_checkpoint(const std::string& folder);

}  // namespace lm
