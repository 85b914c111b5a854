// io/output_path.cpp: resolving an output path as open(O_CREAT) would: the kernel's stat for
// the verdict, and reading the last component's symlinks for the directory a new file goes into.
#include "io/output_path.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace strata::tracer {

namespace {

// Note [Writing where open() would]
// An output goes where Python's open(path, "w") would put it, and fails where that would fail:
// - The kernel decides: stat(path) follows every symlink as open() does, so a symlink loop is
//   ELOOP, a name over NAME_MAX or a path over PATH_MAX is ENAMETOOLONG, a regular file on the way
//   is ENOTDIR, an unsearchable directory is EACCES, and a directory is refused; so is a name with a
//   trailing slash once the directory above it exists (open(O_CREAT) says EISDIR, whatever is there).
// - A new file (stat says ENOENT) goes where open(O_CREAT) would create it: through a dangling
//   symlink (or a chain of them) to the file it names, in the directory the link's text resolves
//   against. This reads the last component's symlinks (at most 40, Linux's MAXSYMLINKS) and keeps
//   the directory as a descriptor, so the temporary file and the rename happen in exactly that
//   directory. A missing directory is ENOENT, as for open().
// - An existing regular file is found the same way, and the kernel's answer is checked against it
//   (same device and inode); where they differ (a /proc "magic" link to a deleted file) there is no
//   directory to replace the file in, and it is written in place (Note [When the file is written
//   in place], atomic_file.cpp).
// - A FIFO or a device is written directly: renaming over /dev/null or /dev/stdout would replace the
//   device node (which root may do), and such a file cannot be half-written anyway.
constexpr int kMaxSymlinks = 40;

bool strip_trailing_slashes(std::string& path) {
  bool stripped = false;
  while (path.size() > 1 && path.back() == '/') path.pop_back(), stripped = true;
  return stripped;
}

// Follows `path`'s last component through its symlinks, from the working directory.
OutputPath walk(std::string path) {
  OutputPath r;
  int base = AT_FDCWD;
  std::string base_text;
  for (int links = 0;;) {
    const bool trailing_slash = strip_trailing_slashes(path);
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    r.name = slash == std::string::npos ? path : path.substr(slash + 1);
    r.dir_text = dir[0] == '/' || base_text.empty() ? dir : base_text + "/" + dir;
    r.dir_fd = openat(base, dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    const int open_error = errno;
    if (base != AT_FDCWD) close(base);
    if (r.dir_fd < 0) {
      r.error = open_error;
      return r;
    }
    // "new/" (or a link to it): open(O_CREAT) would have to create a directory.
    if (trailing_slash || r.name.empty() || r.name == "." || r.name == "..") r.error = EISDIR;
    else if (r.name.size() > NAME_MAX) r.error = ENAMETOOLONG;
    if (r.error) return r;
    struct stat st {};
    if (fstatat(r.dir_fd, r.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) r.error = errno;
      return r;  // ENOENT: a new file, here
    }
    if (!S_ISLNK(st.st_mode)) {
      r.exists = true;
      r.st = st;
      return r;
    }
    if (++links > kMaxSymlinks) {
      r.error = ELOOP;
      return r;
    }
    char target[PATH_MAX];
    const ssize_t n = readlinkat(r.dir_fd, r.name.c_str(), target, sizeof target);
    if (n <= 0 || n == static_cast<ssize_t>(sizeof target)) {
      r.error = n < 0 ? errno : n == 0 ? ENOENT : ENAMETOOLONG;
      return r;
    }
    path.assign(target, static_cast<std::size_t>(n));
    base = std::exchange(r.dir_fd, -1);  // a relative target starts from the link's directory
    base_text = r.dir_text;
  }
}

}  // namespace

OutputPath::OutputPath(OutputPath&& other) noexcept
    : error(other.error),
      exists(other.exists),
      st(other.st),
      dir_fd(std::exchange(other.dir_fd, -1)),
      dir_text(std::move(other.dir_text)),
      name(std::move(other.name)) {}

OutputPath& OutputPath::operator=(OutputPath&& other) noexcept {
  if (this != &other) {
    if (dir_fd >= 0) close(dir_fd);
    error = other.error;
    exists = other.exists;
    st = other.st;
    dir_fd = std::exchange(other.dir_fd, -1);
    dir_text = std::move(other.dir_text);
    name = std::move(other.name);
  }
  return *this;
}

OutputPath::~OutputPath() {
  if (dir_fd >= 0) close(dir_fd);
}

OutputPath resolve_output_path(const std::string& path) {  // Note [Writing where open() would]
  OutputPath r;
  if (path.empty()) {
    r.error = ENOENT;
    return r;
  }
  // open(O_CREAT) refuses a trailing slash as EISDIR once the directory above exists, whatever is there.
  if (path.back() == '/') return walk(path);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) r.error = errno;
    return r.error ? std::move(r) : walk(path);
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = EISDIR;
    return r;
  }
  r.exists = true;
  r.st = st;
  if (!S_ISREG(st.st_mode)) return r;
  OutputPath w = walk(path);
  if (w.error == 0 && w.exists && w.st.st_dev == st.st_dev && w.st.st_ino == st.st_ino) {
    r.dir_fd = std::exchange(w.dir_fd, -1);
    r.dir_text = std::move(w.dir_text);
    r.name = std::move(w.name);
  }
  return r;
}

bool same_output_file(const OutputPath& a, const OutputPath& b) {
  if (a.error || b.error || a.exists != b.exists) return false;
  if (a.exists) return S_ISREG(a.st.st_mode) && a.st.st_dev == b.st.st_dev && a.st.st_ino == b.st.st_ino;
  struct stat da {}, db {};
  return a.name == b.name && fstat(a.dir_fd, &da) == 0 && fstat(b.dir_fd, &db) == 0 && da.st_dev == db.st_dev &&
         da.st_ino == db.st_ino;
}

}  // namespace strata::tracer
