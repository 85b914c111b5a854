// lm/weights.h: a model's weights as named strata tensors, whatever file they came from. A reader
// (lm/llama2c_checkpoint.h; a Hugging Face reader can sit beside it) fills one; lm::Model runs it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <strata/core/tensor.h>

#include "config.h"

namespace lm {

// Where the two halves of each rotary pair sit inside a head of q_proj's and k_proj's output rows.
enum class RotaryLayout {
  Interleaved,  // Meta's and llama2.c's: pairs (2i, 2i + 1), as run.c rotates them
  HalfSplit,    // Hugging Face's rotate_half: pairs (i, i + head_size / 2)
};

// One decoder layer, with llama2.c's names and Hugging Face's shapes ([out, in] for the products). Each
// matrix is a float tensor, or, for int8 weights (Weights::group_size > 0), a grouped ScaledTensor of
// the same shape (Note [ScaledTensor groups] in <strata/modes/scaled_tensor.h>).
struct LayerWeights {
  strata::Tensor attn_norm;  // [dim]                       input_layernorm (run.c's rms_att_weight)
  strata::Tensor wq;         // [n_heads * hs, dim]         self_attn.q_proj
  strata::Tensor wk;         // [n_kv_heads * hs, dim]      self_attn.k_proj
  strata::Tensor wv;         // [n_kv_heads * hs, dim]      self_attn.v_proj
  strata::Tensor wo;         // [dim, n_heads * hs]         self_attn.o_proj
  strata::Tensor ffn_norm;   // [dim]                       post_attention_layernorm (rms_ffn_weight)
  strata::Tensor w1;         // [hidden_dim, dim]           mlp.gate_proj
  strata::Tensor w2;         // [dim, hidden_dim]           mlp.down_proj
  strata::Tensor w3;         // [hidden_dim, dim]           mlp.up_proj
};

struct Weights {
  Config config;
  RotaryLayout rotary_layout = RotaryLayout::Interleaved;
  strata::Tensor embed;       // [vocab, dim]   model.embed_tokens
  std::vector<LayerWeights> layers;
  strata::Tensor final_norm;  // [dim]          model.norm
  strata::Tensor output;      // [vocab, dim]   lm_head (embed itself when tied)
  // int8 weights (a version-2 .bin, or --int8): the group size of their scales; 0 for float weights.
  std::int64_t group_size = 0;
  // What the tensors' memory lives in (a file mapping), kept alive as long as the weights are.
  std::shared_ptr<const void> backing;
  std::string source;  // the file or folder they were read from, for messages
};

}  // namespace lm
