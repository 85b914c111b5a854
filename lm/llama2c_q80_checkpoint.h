// lm/llama2c_q80_checkpoint.h: llama2.c's int8 checkpoint, the version-2 `.bin` that export.py
// --version 2 writes and runq.c reads. A 256-byte header: uint32 magic 0x616b3432 ("ak42"), int32
// version 2, the seven int32 of version 0 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size
// always positive, seq_len), uint8 shared_classifier, int32 group_size (unaligned, at byte 37), zeros.
// Then the float32 norms (rms_att of every layer, rms_ffn of every layer, rms_final) and each int8
// matrix as its values followed by its float32 scales, one per group of group_size consecutive
// values (Q8_0): token embedding, wq, wk, wv, wo, w1, w2, w3 of every layer, wcls unless shared. The
// file is memory-mapped; the matrices are grouped ScaledTensors over it, read in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config.h"
#include "weights.h"

namespace lm {

inline constexpr std::uint64_t kQ80HeaderBytes = 256;

struct Q80Header {
  Config config;
  std::int64_t group_size = 0;
};

// The header's fields, checked: magic, version 2, the seven numbers as version 0 checks them (see
// parse_llama2c_header), shared_classifier 0 or 1, and a group size that divides dim and hidden_dim
// (every product's reduction dimension). `path` names the file in errors.
Q80Header parse_llama2c_q80_header(const std::byte (&header)[kQ80HeaderBytes], const std::string& path);
// The bytes a version-2 checkpoint of this header holds, header included (saturating at 2^64 - 1).
std::uint64_t llama2c_q80_file_size(const Q80Header& header);

// Reads `path`: a strata::Error naming the file and what was expected for a wrong magic or version,
// a damaged header or group size, or a size that is not the header's (naming the first tensor that
// does not fit in a truncated file). The weights' group_size is the header's.
Weights read_llama2c_q80_checkpoint(const std::string& path);

}  // namespace lm
