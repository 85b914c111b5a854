// tracer/atomic_file.h: writing an output file all-or-nothing. The temporary file is created next to
// the destination up front (so an unwritable path fails before any work), written and synced, and
// renamed over the destination only when complete; on any failure, early exit or fatal signal (see
// install_temp_file_cleanup_on_signals) it is removed. The final file has the permissions Python's
// open(path, "w") would give it: 0666 & ~umask for a new file, the old mode for a replaced one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::tracer {

class AtomicFile {
 public:
  // Throws strata::Error, prefixed with "<label>: " when a label is given, when `path` is empty, names
  // a directory, is an existing file that may not be written, or its directory cannot take a new file.
  explicit AtomicFile(std::string path, std::string label = "");
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Writes `content` in full under the temporary name and syncs it; throws strata::Error on failure.
  void write(std::string_view content);
  // Moves the written file into place; throws strata::Error on failure.
  void publish();
  // write, then publish.
  void commit(std::string_view content);

  const std::string& path() const { return path_; }
  // The temporary file, empty once published or when the destination is not a regular file (a FIFO or a
  // device such as /dev/null is written directly: it cannot be replaced, and must not be).
  const std::string& temp_path() const { return temp_path_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err) const;
  void discard() noexcept;  // close, remove the temporary file, unregister it

  std::string path_;    // as given, for messages
  std::string target_;  // where the data goes: `path_` with a symlink to an existing file resolved
  std::string label_;
  std::string temp_path_;
  int fd_ = -1;
  int slot_ = -1;  // in the registry of temporary files
  bool written_ = false;
  bool done_ = false;
};

// Makes SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove every AtomicFile's temporary file, then
// terminate the process by the same signal (so a shell sees "killed by SIGINT"). Signals that are
// ignored when this is called stay ignored. For executables: a library should not take over signals,
// so nothing calls this implicitly (strata-trace's main does).
void install_temp_file_cleanup_on_signals();

// The temporary files that would be removed now (for tests).
std::vector<std::string> registered_temp_files();
// What the signal handler does before re-raising: unlink every registered temporary file.
// Async-signal-safe.
void remove_registered_temp_files() noexcept;

}  // namespace strata::tracer
