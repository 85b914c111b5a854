// nn/tensor_save_load.cpp: strata::save and strata::load, LibTorch's spelling for writing tensors to
// a file and reading them back, on top of the safetensors writer and loader.
#include <string>
#include <vector>

#include "core/util/error.h"
#include "nn/safetensors.h"

namespace strata {

// Note [Saving tensors with LibTorch's spelling]
// torch::save(tensor, path) writes a zip archive of pickled tensors under the keys "0" (one tensor)
// or "0", "1", ... (a vector); strata writes the same keys into a safetensors file, the one format
// strata reads and writes, so a file from one library does not load in the other (a known
// difference). Loading reads the whole file into memory of its own (as LibTorch's load copies), not a
// mapping another writer could change behind it (Note [A mapping shows later writes to the file]).
// LibTorch's load into a defined tensor set_s it in place (other handles to it see the data, and it
// keeps requires_grad); strata has no set_, so `tensor` is rebound to the tensor read.

namespace {

SafetensorsFile read(const std::string& path) { return load_safetensors(path, {.mmap = false}); }

std::string keys_of(const SafetensorsFile& file) {
  std::string keys;
  for (const auto& entry : file.tensors) keys += (keys.empty() ? "'" : ", '") + entry.first + "'";
  return keys.empty() ? "none" : keys;
}

}  // namespace

void save(const Tensor& tensor, const std::string& path) { save_safetensors(path, {{"0", tensor}}); }

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  TensorDict dict;
  for (std::size_t i = 0; i < tensors.size(); ++i) dict.emplace(std::to_string(i), tensors[i]);
  save_safetensors(path, dict);
}

void load(Tensor& tensor, const std::string& path) {
  SafetensorsFile file = read(path);
  const auto it = file.tensors.find("0");
  STRATA_CHECK(it != file.tensors.end(), "load: '", path, "' holds no tensor under the key '0' that save writes (its keys: ",
               keys_of(file), ")");
  tensor = it->second;
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  SafetensorsFile file = read(path);
  std::vector<Tensor> out;
  for (auto it = file.tensors.find("0"); it != file.tensors.end(); it = file.tensors.find(std::to_string(out.size())))
    out.push_back(it->second);
  STRATA_CHECK(out.size() == file.tensors.size(), "load: '", path, "' holds keys other than the '0', '1', ... that save writes (its keys: ",
               keys_of(file), ")");
  tensors = std::move(out);
}

}  // namespace strata
