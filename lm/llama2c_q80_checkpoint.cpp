// lm/llama2c_q80_checkpoint.cpp: llama2.c's version-2 int8 `.bin`, memory-mapped, in runq.c's order
// (memory_map_weights): float32 norms, then (int8 values, float32 scales) per matrix.
#include "llama2c_q80_checkpoint.h"

#include <cstring>
#include <vector>

#include <strata/core/util/error.h>
#include <strata/modes/scaled_tensor.h>
#include <strata/ops/functions.h>

#include "llama2c_checkpoint.h"
#include "mapped_file.h"

namespace lm {

namespace {

constexpr std::uint32_t kMagic = 0x616b3432;  // "ak42"

// One block of the file: `count` tensors (one per layer, or one) of rows x cols, float32 or Q8_0, and
// the field of Weights (or of each layer's LayerWeights) it fills.
struct Q80Block {
  const char* name;  // Hugging Face's, {} for the layer
  const char* runq;  // runq.c's field
  std::int64_t count, rows, cols;
  bool quantized;
  strata::Tensor LayerWeights::*layer_field;
  strata::Tensor Weights::*model_field;
};

std::vector<Q80Block> q80_blocks_of(const Config& c) {
  const std::int64_t L = c.n_layers, q = c.n_heads * c.head_size(), kv = c.kv_dim();
  using LW = LayerWeights;
  std::vector<Q80Block> blocks = {
      {"model.layers.{}.input_layernorm.weight", "rms_att_weight", L, c.dim, 1, false, &LW::attn_norm, nullptr},
      {"model.layers.{}.post_attention_layernorm.weight", "rms_ffn_weight", L, c.dim, 1, false, &LW::ffn_norm, nullptr},
      {"model.norm.weight", "rms_final_weight", 1, c.dim, 1, false, nullptr, &Weights::final_norm},
      {"model.embed_tokens.weight", "q_tokens", 1, c.vocab_size, c.dim, true, nullptr, &Weights::embed},
      {"model.layers.{}.self_attn.q_proj.weight", "wq", L, q, c.dim, true, &LW::wq, nullptr},
      {"model.layers.{}.self_attn.k_proj.weight", "wk", L, kv, c.dim, true, &LW::wk, nullptr},
      {"model.layers.{}.self_attn.v_proj.weight", "wv", L, kv, c.dim, true, &LW::wv, nullptr},
      {"model.layers.{}.self_attn.o_proj.weight", "wo", L, c.dim, q, true, &LW::wo, nullptr},
      {"model.layers.{}.mlp.gate_proj.weight", "w1", L, c.hidden_dim, c.dim, true, &LW::w1, nullptr},
      {"model.layers.{}.mlp.down_proj.weight", "w2", L, c.dim, c.hidden_dim, true, &LW::w2, nullptr},
      {"model.layers.{}.mlp.up_proj.weight", "w3", L, c.hidden_dim, c.dim, true, &LW::w3, nullptr},
  };
  if (!c.tied_output)
    blocks.push_back({"lm_head.weight", "wcls", 1, c.vocab_size, c.dim, true, nullptr, &Weights::output});
  return blocks;
}

// Bytes of one tensor of the block (values and scales); saturates instead of wrapping.
std::uint64_t tensor_bytes(const Q80Block& b, std::int64_t group, bool* overflow) {
  std::uint64_t n = 0;
  *overflow |= __builtin_mul_overflow(static_cast<std::uint64_t>(b.rows), static_cast<std::uint64_t>(b.cols), &n);
  return b.quantized ? n + n / static_cast<std::uint64_t>(group) * 4 : n * 4;
}

std::string q80_tensor_name(const Q80Block& b, std::int64_t index) {
  std::string name = b.name;
  const std::size_t brace = name.find("{}");
  if (brace != std::string::npos) name.replace(brace, 2, std::to_string(index));
  return name + " (runq.c's " + b.runq + (b.count > 1 ? " of layer " + std::to_string(index) : "") + ", " +
         std::to_string(b.rows) + (b.cols > 1 ? "x" + std::to_string(b.cols) : "") +
         (b.quantized ? " int8 and its scales)" : " float32)");
}

template <typename T>
T read_at(const std::byte* bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

// A float32 tensor of `sizes` over the mapping at `at`: in place when aligned, else a copy (a group
// size below 4 can leave scales at an address that is not a multiple of 4).
strata::Tensor floats_at(std::byte* at, const std::vector<std::int64_t>& sizes) {
  if (reinterpret_cast<std::uintptr_t>(at) % alignof(float) == 0) return strata::from_blob(at, sizes);
  strata::Tensor copy = strata::empty(sizes, {strata::ScalarType::Float32, std::nullopt});
  std::memcpy(copy.data_ptr<float>(), at, static_cast<std::size_t>(copy.numel()) * sizeof(float));
  return copy;
}

}  // namespace

Q80Header parse_llama2c_q80_header(const std::byte (&h)[kQ80HeaderBytes], const std::string& path) {
  const auto magic = read_at<std::uint32_t>(h, 0);
  STRATA_CHECK(magic == kMagic, path, ": not a llama2.c version-2 checkpoint: magic 0x", std::hex, magic, std::dec,
               ", expected 0x616b3432 (\"ak42\")");
  const auto version = read_at<std::int32_t>(h, 4);
  STRATA_CHECK(version == 2, path, ": a llama2.c version-", version, " checkpoint (magic \"ak42\"); expected version 2 "
               "(int8, export.py --version 2) or a float32 version-0 .bin (no magic)");
  std::int32_t fields[7];
  for (int i = 0; i < 7; ++i) fields[i] = read_at<std::int32_t>(h, 8 + 4 * static_cast<std::size_t>(i));
  const auto shared = read_at<std::uint8_t>(h, 36);
  STRATA_CHECK(shared <= 1, path, ": damaged version-2 header: shared_classifier is ", int{shared}, ", expected 0 or 1");
  STRATA_CHECK(fields[5] > 0, path, ": damaged version-2 header: vocab_size is ", fields[5], ", expected a positive number");
  fields[5] = shared ? fields[5] : -fields[5];  // version 0's convention, so its checks apply
  Q80Header out;
  out.config = parse_llama2c_header(fields, path);
  out.group_size = read_at<std::int32_t>(h, 37);
  const Config& c = out.config;
  STRATA_CHECK(out.group_size > 0 && out.group_size <= 65536 && c.dim % out.group_size == 0 &&
                   c.hidden_dim % out.group_size == 0,
               path, ": damaged version-2 header: group size ", out.group_size, " does not divide dim ", c.dim,
               " and hidden_dim ", c.hidden_dim, " (expected 1 to 65536, dividing both; export.py uses 64, halved "
               "until it divides dim)");
  return out;
}

std::uint64_t llama2c_q80_file_size(const Q80Header& header) {
  bool overflow = false;
  std::uint64_t bytes = kQ80HeaderBytes;
  for (const Q80Block& b : q80_blocks_of(header.config)) {
    std::uint64_t block = 0;
    overflow |= __builtin_mul_overflow(tensor_bytes(b, header.group_size, &overflow), static_cast<std::uint64_t>(b.count), &block);
    overflow |= __builtin_add_overflow(bytes, block, &bytes);
  }
  return overflow ? UINT64_MAX : bytes;
}

Weights read_llama2c_q80_checkpoint(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  STRATA_CHECK(file->size() >= kQ80HeaderBytes, path, ": ", file->size(),
               " bytes, too short for a llama2.c version-2 checkpoint (a 256-byte header, then the weights)");
  std::byte header[kQ80HeaderBytes];
  std::memcpy(header, file->data(), sizeof header);
  const Q80Header h = parse_llama2c_q80_header(header, path);
  const Config& c = h.config;
  const std::uint64_t expected = llama2c_q80_file_size(h);
  const std::string described = describe_llama2c_config(c) + ", group size " + std::to_string(h.group_size);
  const std::vector<Q80Block> blocks = q80_blocks_of(c);
  if (file->size() < expected) {
    std::uint64_t offset = kQ80HeaderBytes;
    bool overflow = false;
    for (const Q80Block& b : blocks)
      for (std::int64_t i = 0; i < b.count; offset += tensor_bytes(b, h.group_size, &overflow), ++i)
        STRATA_CHECK(offset + tensor_bytes(b, h.group_size, &overflow) <= file->size(), path, ": truncated: ",
                     file->size(), " bytes, but the header (", described, ") needs ", expected, "; tensor ",
                     q80_tensor_name(b, i), " needs bytes ", offset, " to ", offset + tensor_bytes(b, h.group_size, &overflow));
    // Sizes past 2^64 (a damaged header) wrap above: say so rather than name a tensor.
    strata::detail::throw_error(strata::detail::str_cat(path, ": truncated: ", file->size(), " bytes, but the header (",
                                                        described, ") describes more than 2^64 bytes"));
  }
  STRATA_CHECK(file->size() == expected, path, ": ", file->size() - expected, " bytes after the last tensor: the header (",
               described, ") describes a ", expected, "-byte checkpoint, the file has ", file->size(), " bytes");

  Weights w;
  w.config = c;
  w.group_size = h.group_size;
  w.layers.resize(static_cast<std::size_t>(c.n_layers));
  std::byte* at = file->data() + kQ80HeaderBytes;
  auto take = [&](const Q80Block& b) {
    if (!b.quantized) {
      strata::Tensor t = floats_at(at, {b.rows});
      at += b.rows * 4;
      return t;
    }
    strata::Tensor values = strata::from_blob(at, {b.rows, b.cols}, {strata::ScalarType::Int8, std::nullopt});
    at += b.rows * b.cols;
    strata::Tensor scales = floats_at(at, {b.rows, b.cols / h.group_size});
    at += b.rows * (b.cols / h.group_size) * 4;
    return strata::tracer::ScaledTensor::wrap_grouped(std::move(values), std::move(scales), h.group_size);
  };
  for (const Q80Block& b : blocks)
    for (std::int64_t l = 0; l < b.count; ++l) {
      if (b.layer_field) w.layers[static_cast<std::size_t>(l)].*b.layer_field = take(b);
      else w.*b.model_field = take(b);
    }
  if (c.tied_output) w.output = w.embed;
  w.rotary_layout = RotaryLayout::Interleaved;
  w.source = path;
  w.backing = std::move(file);
  return w;
}

}  // namespace lm
