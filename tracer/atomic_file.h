// tracer/atomic_file.h: writing an output file all-or-nothing. The temporary file is created next to
// the destination up front (so an unwritable path fails before any work), and renamed over the
// destination only when complete; on any failure or early exit it is removed.
#pragma once

#include <string>

namespace strata::tracer {

class AtomicFile {
 public:
  // Throws strata::Error naming `path` when its directory cannot take a new file.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Writes `content` and moves it into place; throws strata::Error on failure.
  void commit(const std::string& content);

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
};

}  // namespace strata::tracer
