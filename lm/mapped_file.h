// lm/mapped_file.h: a whole file mapped into memory, read-only on disk: pages are shared with the page
// cache until written, and a write (strata lets a caller write a from_blob tensor) lands in a private
// copy of the page, never in the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lm {

class MappedFile {
 public:
  // Maps `path`; a strata::Error naming the file and the system's reason when it cannot.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace lm
