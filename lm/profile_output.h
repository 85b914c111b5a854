// lm/profile_output.h: `strata-lm --profile FILE`: strata's profiler around the generation, the
// model's module scopes as record_function scopes, and the Chrome trace written to FILE all or
// nothing: a temporary file beside FILE, made before any work (so an unwritable path fails at once),
// renamed over FILE only once the whole trace is in it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <strata/modes/profiler.h>

#include "scope_tools.h"

namespace lm {

// Note [The trace file is replaced, never rewritten]
// A temporary file `.NAME.XXXXXX` is made in FILE's folder up front (mkstemp), written, synced, given
// the mode a new file would get (0666 & ~umask) and renamed over FILE, so a reader sees the old file
// or the whole new one, never a part, and an error (or a generation that fails) removes the
// temporary file and leaves FILE as it was. An existing FILE that is not writable or not a regular file
// (a folder, /dev/stdout), or a missing folder, is refused before the generation starts; a symbolic
// link's file is replaced, the link kept. A fatal signal in between leaves the
// temporary file behind (strata's own io/atomic_file.h removes it, but is not a public header).
class AtomicOutputFile {
 public:
  // `what` names the output in messages ("--profile").
  AtomicOutputFile(std::string path, std::string what);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  // Writes `content` in full, syncs, renames over the path; throws strata::Error on failure.
  void commit(std::string_view content);
  const std::string& temp_path() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& doing, int err);
  std::string path_, what_, temp_;
  std::string destination_;  // path_, or the file a symbolic link names
  int fd_ = -1;
};

class GenerationProfile {
 public:
  explicit GenerationProfile(const std::string& path) : file_(path, "--profile") {}
  // Starts the profiler (and the module scopes' record_function scopes on this thread).
  void start();
  // Stops it and writes the trace (PyTorch's export_chrome_trace document) to the file.
  void finish();

 private:
  AtomicOutputFile file_;
  std::optional<strata::profiler::Profiler> profiler_;
  std::optional<ScopeTools> scopes_;
};

}  // namespace lm
