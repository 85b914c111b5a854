// io/atomic_file.h: writing an output file all-or-nothing, where open() would write it. A
// temporary file is created next to the destination up front (so an unwritable path fails before
// any work), written and synced, and renamed over the destination only when complete; on any
// failure, early exit or fatal signal (io/temp_file_registry.h) it is removed. The final file has
// the permissions Python's open(path, "w") would give it: 0666 & ~umask for a new file, the old
// mode, owner and group for a replaced one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "output_path.h"
#include "temp_file_registry.h"

namespace strata::tracer {

class AtomicFile {
 public:
  // Throws strata::Error, prefixed with "<label>: " when a label is given, when `path` is empty, names
  // a directory, or open(path, O_WRONLY | O_CREAT) would fail (with that error). Opening an existing
  // FIFO waits for a reader, as open() does.
  explicit AtomicFile(std::string path, std::string label = "");
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Writes `content` in full under the temporary name and syncs it (into a FIFO or device: directly;
  // for a file written in place: kept until publish); throws strata::Error on failure.
  void write(std::string_view content);
  // The same in parts, for content too big to hold: append each part, then finish (which syncs).
  void append(std::string_view part);
  void finish();
  // Throws strata::Error naming both sizes when a file of `bytes` bytes cannot be written: more than
  // the file system's free space or the file-size limit (RLIMIT_FSIZE). Nothing to check for a FIFO
  // or a device. (Note [Checking that a file fits], atomic_file.cpp.)
  void check_fits(std::uint64_t bytes) const;
  // Moves the written file into place; throws strata::Error on failure.
  void publish();
  // write, then publish.
  void commit(std::string_view content);

  // The two name the same file, one that writing the other would replace (see same_output_file).
  bool same_file_as(const AtomicFile& other) const { return same_output_file(target_, other.target_); }

  const std::string& path() const { return path_; }
  // The temporary file, empty once published, and when there is none: the destination is a FIFO or a
  // device, or is written in place (Note [When the file is written in place], atomic_file.cpp).
  const std::string& temp_path() const { return temp_path_; }
  bool in_place() const { return mode_ == Mode::kInPlace; }
  // What a file written in place holds in memory before it starts rewriting the file (Note [When
  // the file is written in place], atomic_file.cpp).
  static constexpr std::size_t kInPlaceHoldBytes = std::size_t{64} << 20;

 private:
  enum class Mode { kReplace, kStream, kInPlace };
  [[noreturn]] void fail(const std::string& what, int err) const;
  int create_temp();       // 0, or why the directory does not take a temporary file
  int match_old_owner_and_mode();
  void discard() noexcept;       // discard_temp, and close the file opened to be written in place
  void discard_temp() noexcept;  // close, remove the temporary file, unregister it

  std::string path_;  // as given, for messages
  std::string label_;
  OutputPath target_;
  Mode mode_ = Mode::kReplace;
  int fd_ = -1;           // the temporary file, or the FIFO or device
  int in_place_fd_ = -1;  // the existing file, opened to write (not truncated)
  std::string pending_;   // what publish writes in place
  bool rewriting_ = false;  // in place, past kInPlaceHoldBytes: the file is being rewritten
  std::string temp_name_;
  std::string temp_path_;
  int slot_ = -1;  // in the registry of temporary files
  bool written_ = false;
  bool done_ = false;
};

}  // namespace strata::tracer
