// lm/llama2c_checkpoint.h: llama2.c's float32 checkpoint (the `.bin` run.c reads): a header of seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; vocab_size negative when
// the classifier is stored separately), then float32 blocks in run.c's order. The file is memory-mapped
// and the weights are tensors over the mapping (from_blob, no copy).
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "weights.h"

namespace lm {

// The header's seven numbers as a Config, checked (positive, dim divisible by n_heads, n_heads by
// n_kv_heads, an even head size). `path` names the file in errors.
Config parse_llama2c_header(const std::int32_t (&header)[7], const std::string& path);
// "dim 64, hidden_dim 192, ..., seq_len 64", for messages.
std::string describe_llama2c_config(const Config& config);
// The bytes a checkpoint of this config holds, header included (run.c's layout).
std::uint64_t llama2c_file_size(const Config& config);

// Reads `path`; a file that starts with export.py's versioned magic "ak42" is read by
// read_llama2c_q80_checkpoint (llama2c_q80_checkpoint.h), which reads version 2 and names any other.
// Otherwise: a strata::Error naming the file, and the tensor where one is at fault, for a missing or
// unreadable file, a damaged header, or a size that is not the header's (truncated or trailing bytes).
Weights read_llama2c_checkpoint(const std::string& path);

}  // namespace lm
