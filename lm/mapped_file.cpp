// lm/mapped_file.cpp: MappedFile over POSIX open, fstat and mmap.
#include "mapped_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <strata/core/util/error.h>

namespace lm {

namespace {

// Closes a descriptor when it goes out of scope (the mapping keeps its own reference to the file).
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  STRATA_CHECK(file.fd >= 0, path, ": cannot open: ", std::strerror(errno));
  struct stat info {};
  STRATA_CHECK(::fstat(file.fd, &info) == 0, path, ": cannot stat: ", std::strerror(errno));
  STRATA_CHECK(S_ISREG(info.st_mode), path, ": not a regular file");
  size_ = static_cast<std::uint64_t>(info.st_size);
  if (size_ == 0) return;  // nothing to map; readers report the file as too short
  void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
  STRATA_CHECK(p != MAP_FAILED, path, ": cannot map ", size_, " bytes: ", std::strerror(errno));
  data_ = static_cast<std::byte*>(p);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace lm
