// tests/fuzz/safetensors_fuzzer.cpp: the safetensors loader over arbitrary bytes, every way in: from
// memory (load_safetensors_from_bytes) and from a file (load_safetensors, which maps it or, with
// mmap = false, reads it; the file is a memfd, so no input touches the disk).
// Invariants, each an abort (a crash for libFuzzer, a failed test for the replay): the only exception
// is a strata::Error whose message starts "load_safetensors: '<file>': "; every way agrees (the same
// message, or the same tensors and metadata); a file that loads writes back (serialize_safetensors)
// to bytes that load to the same tensors and that serialise to themselves. Sanitizer reports (an
// over-read of the input or the mapping), leaks and huge allocations are libFuzzer's to catch.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/util/error.h"
#include "nn/safetensors.h"

namespace {

using strata::SafetensorsFile;

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "safetensors fuzzer: invariant broken: %s\n", what);
    std::abort();
  }
}

bool same_tensors(const SafetensorsFile& a, const SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, x] : a.tensors) {
    const auto it = b.tensors.find(name);
    if (it == b.tensors.end()) return false;
    const strata::Tensor& y = it->second;
    if (x.dtype() != y.dtype() || x.sizes().vec() != y.sizes().vec()) return false;
    const std::size_t n = static_cast<std::size_t>(x.numel()) * strata::element_size(x.dtype());
    if (n && std::memcmp(x.raw_data(), y.raw_data(), n) != 0) {
      if (x.dtype() != strata::ScalarType::Bool) return false;
      if (x.to_vector<bool>() != y.to_vector<bool>()) return false;  // bool bytes normalise to 0 and 1
    }
  }
  return true;
}

// The result of one way in: the file, or the Error's message.
struct Outcome {
  std::optional<SafetensorsFile> file;
  std::string error;
};

template <typename Load>
Outcome attempt(const std::string& label, Load load) {
  Outcome out;
  try {
    out.file = load();
  } catch (const strata::Error& e) {
    out.error = e.what();
    require(out.error.rfind("load_safetensors: '" + label + "': ", 0) == 0, "the Error names the file");
  }
  return out;
}

int memfd() {
  static const int fd = memfd_create("safetensors-fuzz", MFD_CLOEXEC);
  require(fd >= 0, "memfd_create works");
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (std::size_t{1} << 20)) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const int fd = memfd();
  require(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == static_cast<ssize_t>(size), "the memfd takes the input");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);

  const Outcome in_memory = attempt(path, [&] { return strata::load_safetensors_from_bytes(bytes, path); });
  const Outcome mapped = attempt(path, [&] { return strata::load_safetensors(path); });
  const Outcome copied = attempt(path, [&] { return strata::load_safetensors(path, {.mmap = false}); });
  require(in_memory.error == mapped.error && copied.error == mapped.error, "every way gives the same error");
  require(in_memory.file.has_value() == mapped.file.has_value() && copied.file.has_value() == mapped.file.has_value(),
          "every way loads or none does");
  if (!in_memory.file) return 0;
  require(same_tensors(*in_memory.file, *mapped.file) && same_tensors(*copied.file, *mapped.file), "every way loads the same tensors");

  const std::string written = strata::serialize_safetensors(mapped.file->tensors, mapped.file->metadata);
  const SafetensorsFile again = strata::load_safetensors_from_bytes(written, "written");
  require(same_tensors(again, *mapped.file), "what is written loads to what was read");
  require(strata::serialize_safetensors(again.tensors, again.metadata) == written, "writing is a fixed point");
  return 0;
}
