// nn/safetensors.h: saving and loading named tensors in Hugging Face's safetensors format (an 8-byte
// little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, "__metadata__":
// {str: str}} padded with spaces to a multiple of 8, then the data). Files are written as the
// safetensors crate writes them, byte for byte, and loaded by mapping the file (Note [Loading maps the
// file], safetensors_load.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "../core/tensor.h"

namespace strata {

using TensorDict = std::map<std::string, Tensor>;
using SafetensorsMetadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  TensorDict tensors;
  SafetensorsMetadata metadata;  // the "__metadata__" entry; empty when the file has none
};

// Writes `tensors` (CPU tensors of any layout; F32, F64, I64 or BOOL) and `metadata` to `path`, all or
// nothing: a temporary file in the same directory, renamed over `path` when complete, written in parts
// with bounded memory (Note [Saving with bounded memory], safetensors_save.cpp). Throws strata::Error
// naming the path when a tensor cannot be saved, the file would not fit (free space, RLIMIT_FSIZE:
// both sizes named) or cannot be written; the temporary file is removed on every failure.
void save_safetensors(const std::string& path, const TensorDict& tensors, const SafetensorsMetadata& metadata = {});

// The bytes save_safetensors writes (header and data), for callers that keep weights in memory.
std::string serialize_safetensors(const TensorDict& tensors, const SafetensorsMetadata& metadata = {});

struct SafetensorsLoadOptions {
  // As torch.load's mmap: true maps the file, and its later in-place rewrites by another writer show
  // in the tensors (Note [A mapping shows later writes to the file], safetensors_load.cpp); false
  // reads it into memory the tensors own, which nothing changes behind them.
  bool mmap = true;
};

// Reads a safetensors file. Aligned data is used in place (the mapping, or the buffer read, lives
// until the last tensor from it is released); the rest is copied. Tensors are writable: writes go to
// private copy-on-write pages and never reach the file. Throws strata::Error naming the path and what
// is wrong for any file that is not a valid safetensors file of strata's dtypes.
SafetensorsFile load_safetensors(const std::string& path, const SafetensorsLoadOptions& options = {});

// The same from bytes in memory (always copied); `label` names the source in errors.
SafetensorsFile load_safetensors_from_bytes(std::string_view bytes, const std::string& label = "<bytes>");

// LibTorch's spelling (torch::save(a, "a.pt"), torch::load(a, "a.pt")), writing safetensors files
// rather than LibTorch's zip archives (Note [Saving tensors with LibTorch's spelling],
// tensor_save_load.cpp): one tensor under the key "0", a vector under "0", "1", ..., the keys
// LibTorch's archives use. `load` reads the file into memory of its own (mmap = false, as LibTorch
// copies) and rebinds `tensor` (or fills `tensors`) with what it read; errors are load_safetensors's,
// or name the missing key.
void save(const Tensor& tensor, const std::string& path);
void save(const std::vector<Tensor>& tensors, const std::string& path);
void load(Tensor& tensor, const std::string& path);
void load(std::vector<Tensor>& tensors, const std::string& path);

}  // namespace strata
