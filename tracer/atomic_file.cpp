// tracer/atomic_file.cpp: mkstemp + write + fsync + rename.
#include "tracer/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace strata::tracer {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  STRATA_CHECK(!path_.empty(), "output path is empty");
  temp_path_ = path_ + ".tmp.XXXXXX";
  std::vector<char> name(temp_path_.begin(), temp_path_.end());
  name.push_back('\0');
  fd_ = mkstemp(name.data());
  STRATA_CHECK(fd_ >= 0, "cannot write '", path_, "': ", std::strerror(errno));
  temp_path_ = name.data();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    close(fd_);
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::commit(const std::string& content) {
  STRATA_CHECK(fd_ >= 0, "'", path_, "' was already written");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd_, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    STRATA_CHECK(n > 0, "cannot write '", path_, "': ", std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  STRATA_CHECK(fsync(fd_) == 0, "cannot write '", path_, "': ", std::strerror(errno));
  close(fd_);
  fd_ = -1;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    STRATA_CHECK(false, "cannot write '", path_, "': ", std::strerror(err));
  }
}

}  // namespace strata::tracer
