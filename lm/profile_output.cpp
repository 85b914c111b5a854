// lm/profile_output.cpp: the atomic trace file and the profiled generation (Note [The trace file is
// replaced, never rewritten], lm/profile_output.h).
#include "profile_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <strata/core/util/error.h>

namespace lm {

namespace fs = std::filesystem;

AtomicOutputFile::AtomicOutputFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  STRATA_CHECK(!path_.empty(), "strata-lm: ", what_, " needs a file name, got \"\"");
  fs::path target(path_);
  std::error_code ec;
  STRATA_CHECK(!fs::is_directory(target, ec), "strata-lm: ", what_, ": ", path_, " is a directory");
  if (fs::exists(target, ec)) {
    // A device or FIFO (/dev/stdout) is never replaced; a symbolic link's file is, not the link.
    STRATA_CHECK(fs::is_regular_file(target, ec), "strata-lm: ", what_, ": ", path_, " is not a regular file");
    if (::access(path_.c_str(), W_OK) != 0) fail("cannot write", errno);
    target = fs::canonical(target, ec);
    STRATA_CHECK(!ec, "strata-lm: ", what_, ": cannot resolve ", path_, ": ", ec.message());
  }
  destination_ = target.string();
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  fd_ = ::mkstemp(buffer.data());
  if (fd_ < 0) fail("cannot write", errno);
  temp_ = buffer.data();
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicOutputFile::fail(const std::string& doing, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  strata::detail::throw_error(strata::detail::str_cat("strata-lm: ", what_, ": ", doing, " ", path_, ": ", std::strerror(err)));
}

void AtomicOutputFile::commit(std::string_view content) {
  STRATA_CHECK(fd_ >= 0, "strata-lm: ", what_, ": ", path_, " was already written");
  while (!content.empty()) {
    const ssize_t written = ::write(fd_, content.data(), content.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail("cannot write", written < 0 ? errno : EIO);
    content.remove_prefix(static_cast<std::size_t>(written));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, 0666 & ~mask) != 0) fail("cannot set the mode of", errno);
  if (::fsync(fd_) != 0) fail("cannot sync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write", errno);
  if (::rename(temp_.c_str(), destination_.c_str()) != 0) fail("cannot replace", errno);
  temp_.clear();
}

void GenerationProfile::start() {
  strata::profiler::ProfilerOptions options;
  options.record_shapes = true;
  profiler_.emplace(options);
  scopes_.emplace(ScopeToolsOptions{nullptr, nullptr, true});
}

void GenerationProfile::finish() {
  STRATA_CHECK(profiler_.has_value(), "lm::GenerationProfile::finish before start");
  scopes_->check();
  scopes_.reset();
  profiler_->stop();
  file_.commit(profiler_->chrome_trace().dump());
}

}  // namespace lm
