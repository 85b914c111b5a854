// io/output_path.h: where open(path, O_WRONLY | O_CREAT | O_TRUNC) would write, found without
// creating or changing anything: the file after every symlink, the directory that holds it and its
// name there, or the error open() would give. See Note [Writing where open() would].
#pragma once

#include <sys/stat.h>

#include <string>

namespace strata::tracer {

struct OutputPath {
  int error = 0;  // an errno value when open() would fail; then nothing else is set
  bool exists = false;
  struct stat st {};  // when it exists: the file itself (symlinks followed)
  // The directory that holds the file (an O_PATH descriptor, owned by this object), and the file's
  // name in it. -1 for a file that exists but is not regular (a FIFO, a device: written in place),
  // and for one the kernel reaches by a path that reading the symlinks does not follow (a /proc
  // "magic" link to a deleted file).
  int dir_fd = -1;
  std::string dir_text;  // the directory as a path, for messages
  std::string name;

  OutputPath() = default;
  OutputPath(OutputPath&& other) noexcept;
  OutputPath& operator=(OutputPath&& other) noexcept;
  ~OutputPath();
};

OutputPath resolve_output_path(const std::string& path);

// Both paths name the same file, one that writing the other would replace: the same existing file
// (also through a symlink or a hard link), or the same new name in the same directory. FIFOs and
// devices are never "the same": each output is streamed into them in turn, as open() twice would.
bool same_output_file(const OutputPath& a, const OutputPath& b);

}  // namespace strata::tracer
