// lm/llama2c_checkpoint.cpp: llama2.c's float32 `.bin`, memory-mapped, its blocks in run.c's order
// (memory_map_weights), each tensor a view of one from_blob tensor over the mapping.
#include "llama2c_checkpoint.h"

#include <cstring>
#include <vector>

#include <strata/core/util/error.h>
#include <strata/ops/functions.h>

#include "llama2c_q80_checkpoint.h"
#include "mapped_file.h"

namespace lm {

namespace {

constexpr std::uint64_t kHeaderBytes = 7 * sizeof(std::int32_t);
constexpr std::int32_t kVersionedMagic = 0x616b3432;  // "ak42": export.py's version 1 and 2 files

// One block of run.c's layout: `count` tensors (one per layer, or one) of `rows` x `cols` floats
// (cols 1 for vectors); `name` is Hugging Face's ({} for the layer), `runc` run.c's field.
struct Block {
  const char* name;
  const char* runc;
  std::int64_t count;
  std::int64_t rows;
  std::int64_t cols;
  bool used;  // the two legacy rotary tables are skipped, as run.c skips them
  std::uint64_t floats() const {
    return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  }
};

std::vector<Block> blocks_of(const Config& c) {
  const std::int64_t L = c.n_layers, q = c.n_heads * c.head_size(), kv = c.kv_dim();
  std::vector<Block> blocks = {
      {"model.embed_tokens.weight", "token_embedding_table", 1, c.vocab_size, c.dim, true},
      {"model.layers.{}.input_layernorm.weight", "rms_att_weight", L, c.dim, 1, true},
      {"model.layers.{}.self_attn.q_proj.weight", "wq", L, q, c.dim, true},
      {"model.layers.{}.self_attn.k_proj.weight", "wk", L, kv, c.dim, true},
      {"model.layers.{}.self_attn.v_proj.weight", "wv", L, kv, c.dim, true},
      {"model.layers.{}.self_attn.o_proj.weight", "wo", L, c.dim, q, true},
      {"model.layers.{}.post_attention_layernorm.weight", "rms_ffn_weight", L, c.dim, 1, true},
      {"model.layers.{}.mlp.gate_proj.weight", "w1", L, c.hidden_dim, c.dim, true},
      {"model.layers.{}.mlp.down_proj.weight", "w2", L, c.dim, c.hidden_dim, true},
      {"model.layers.{}.mlp.up_proj.weight", "w3", L, c.hidden_dim, c.dim, true},
      {"model.norm.weight", "rms_final_weight", 1, c.dim, 1, true},
      {"(legacy rotary table)", "freq_cis_real", 1, c.seq_len, c.head_size() / 2, false},
      {"(legacy rotary table)", "freq_cis_imag", 1, c.seq_len, c.head_size() / 2, false},
  };
  if (!c.tied_output) blocks.push_back({"lm_head.weight", "wcls", 1, c.vocab_size, c.dim, true});
  return blocks;
}

// The block's name for tensor `index` of it (the layer's number in place of {}).
std::string tensor_name(const Block& b, std::int64_t index) {
  std::string name = b.name;
  const std::size_t brace = name.find("{}");
  if (brace != std::string::npos) name.replace(brace, 2, std::to_string(index));
  return name + " (run.c's " + b.runc + (b.count > 1 ? " of layer " + std::to_string(index) : "") + ")";
}

}  // namespace

std::string describe_llama2c_config(const Config& c) {
  return strata::detail::str_cat("dim ", c.dim, ", hidden_dim ", c.hidden_dim, ", n_layers ", c.n_layers, ", n_heads ",
                                 c.n_heads, ", n_kv_heads ", c.n_kv_heads, ", vocab_size ", c.vocab_size,
                                 c.tied_output ? " (shared classifier)" : " (separate classifier)", ", seq_len ", c.seq_len);
}

namespace {

// The error for a file shorter than its header says: the first tensor that does not fit.
[[noreturn]] void throw_truncated(const std::string& path, const Config& c, std::uint64_t file_size) {
  std::uint64_t offset = kHeaderBytes;
  for (const Block& b : blocks_of(c)) {
    const std::uint64_t each = static_cast<std::uint64_t>(b.rows) * static_cast<std::uint64_t>(b.cols) * 4;
    for (std::int64_t i = 0; i < b.count; ++i, offset += each) {
      if (offset + each <= file_size) continue;
      strata::detail::throw_error(strata::detail::str_cat(
          path, ": truncated: ", file_size, " bytes, but the header (", describe_llama2c_config(c), ") needs ", llama2c_file_size(c),
          "; tensor ", tensor_name(b, i), " of ", b.rows, b.cols > 1 ? "x" + std::to_string(b.cols) : std::string(),
          " float32 needs bytes ", offset, " to ", offset + each));
    }
  }
  strata::detail::throw_internal("offset + each > file_size", __FILE__, __LINE__,
                                 "a truncated file has a tensor that does not fit");
}

}  // namespace

Config parse_llama2c_header(const std::int32_t (&h)[7], const std::string& path) {
  STRATA_CHECK(h[0] != kVersionedMagic, path, ": a llama2.c version-", h[1],
               " checkpoint (magic \"ak42\"), not a float32 version-0 .bin (read_llama2c_checkpoint reads both)");
  const char* names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i)
    STRATA_CHECK(h[i] > 0 || (i == 5 && h[i] < 0 && h[i] != INT32_MIN), path, ": not a llama2.c checkpoint: header field ",
                 names[i], " is ", h[i], ", expected a positive number (vocab_size negative for a separate classifier)");
  Config c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.tied_output = h[5] > 0;
  c.vocab_size = h[5] > 0 ? h[5] : -static_cast<std::int64_t>(h[5]);
  c.seq_len = h[6];
  STRATA_CHECK(c.dim % c.n_heads == 0, path, ": damaged header: dim ", c.dim, " is not a multiple of n_heads ", c.n_heads);
  STRATA_CHECK(c.n_heads % c.n_kv_heads == 0, path, ": damaged header: n_heads ", c.n_heads,
               " is not a multiple of n_kv_heads ", c.n_kv_heads);
  STRATA_CHECK(c.head_size() % 2 == 0, path, ": damaged header: the head size dim / n_heads = ", c.head_size(),
               " is odd; rotary embedding rotates pairs");
  return c;
}

std::uint64_t llama2c_file_size(const Config& c) {
  // A damaged header can ask for more than 2^64 bytes: the sum saturates, giving a size no file has
  // rather than a wrapped one that a short file could match.
  std::uint64_t floats = 0;
  bool overflow = false;
  for (const Block& b : blocks_of(c)) {
    std::uint64_t n = 0;
    overflow |= __builtin_mul_overflow(static_cast<std::uint64_t>(b.count), static_cast<std::uint64_t>(b.rows), &n);
    overflow |= __builtin_mul_overflow(n, static_cast<std::uint64_t>(b.cols), &n);
    overflow |= __builtin_add_overflow(floats, n, &floats);
  }
  std::uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(floats, std::uint64_t{4}, &bytes);
  overflow |= __builtin_add_overflow(bytes, kHeaderBytes, &bytes);
  return overflow ? UINT64_MAX : bytes;
}

Weights read_llama2c_checkpoint(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  STRATA_CHECK(file->size() >= kHeaderBytes, path, ": ", file->size(),
               " bytes, too short for a llama2.c checkpoint (a 28-byte header of seven int32, then float32 weights)");
  std::int32_t header[7];
  std::memcpy(header, file->data(), sizeof header);
  if (header[0] == kVersionedMagic) return read_llama2c_q80_checkpoint(path);
  Weights w;
  w.config = parse_llama2c_header(header, path);
  const Config& c = w.config;
  const std::uint64_t expected = llama2c_file_size(c);
  if (file->size() < expected) throw_truncated(path, c, file->size());
  STRATA_CHECK(file->size() == expected, path, ": ", file->size() - expected, " bytes after the last tensor: the header (",
               describe_llama2c_config(c), ") describes a ", expected, "-byte checkpoint, the file has ", file->size(),
               " bytes (a damaged header, or not a llama2.c float32 checkpoint)");

  // One tensor over all the floats; each weight is a view of it, so the mapping is read in place.
  const auto total = static_cast<std::int64_t>((expected - kHeaderBytes) / 4);
  const strata::Tensor all = strata::from_blob(file->data() + kHeaderBytes, {total});
  std::int64_t offset = 0;
  auto take = [&](const Block& b, std::int64_t index) {
    const std::int64_t n = b.rows * b.cols;
    strata::Tensor t = all.narrow(0, offset + index * n, n);
    return b.cols == 1 ? t : t.view({b.rows, b.cols});
  };
  const std::vector<Block> blocks = blocks_of(c);
  w.layers.resize(static_cast<std::size_t>(c.n_layers));
  strata::Tensor LayerWeights::*per_layer[9] = {&LayerWeights::attn_norm, &LayerWeights::wq, &LayerWeights::wk,
                                                &LayerWeights::wv,        &LayerWeights::wo, &LayerWeights::ffn_norm,
                                                &LayerWeights::w1,        &LayerWeights::w2, &LayerWeights::w3};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (i == 0) w.embed = take(b, 0);
    else if (i <= 9)
      for (std::int64_t l = 0; l < c.n_layers; ++l) w.layers[static_cast<std::size_t>(l)].*per_layer[i - 1] = take(b, l);
    else if (i == 10) w.final_norm = take(b, 0);
    else if (i == 13) w.output = take(b, 0);
    offset += static_cast<std::int64_t>(b.floats());
  }
  if (c.tied_output) w.output = w.embed;
  w.rotary_layout = RotaryLayout::Interleaved;
  w.source = path;
  w.backing = std::move(file);
  return w;
}

}  // namespace lm
