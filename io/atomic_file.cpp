// io/atomic_file.cpp: a temporary file created with O_EXCL in the destination's directory, write
// + fsync + rename, and the cases where the destination is written in place instead.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/util/error.h"

namespace strata::tracer {

namespace {

// Note [When the file is written in place]
// Atomic replacement (a temporary file renamed over the destination) and open(path, "w") mostly
// agree; where they do not, open() decides whether the output can be written at all, and the file
// is written in place (truncated and rewritten, through the descriptor opened up front) where a
// replacement would not be the file open() would give:
// - the directory does not take a new file (not writable, out of inodes) but the file is writable:
//   open() would write it, a rename cannot;
// - the file has other hard links (a rename would detach this name from them), or belongs to an
//   owner or group the replacement cannot be given (fchown refused);
// - the kernel reaches the file by a path that has no directory to rename in (Note [Writing where
//   open() would], output_path.cpp).
// Everything else that open() refuses is refused (a read-only file in a writable directory, which a
// rename would silently replace, is EACCES), and everything it accepts is written. In place, the
// file is truncated only in publish, after the run and stdout succeeded, so every failure before
// that leaves it untouched; a failure or a fatal signal during that last write leaves it partial,
// which is the price of a directory that cannot hold a second copy. Holding the content is bounded
// too: past kInPlaceHoldBytes the file is truncated and written as the content comes, so a huge
// tensor file costs no more memory in place than replaced, and a failure from then on leaves it
// partial as the last write would. A temporary name must fit in
// NAME_MAX: for a long destination name (over 244 bytes) it is "<the name cut to 244 bytes>.tmp.XXXXXX".
constexpr std::size_t kTempSuffix = 11;  // ".tmp.XXXXXX"

std::uint64_t random_bits() {
  std::uint64_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof v)) return v;
  static std::atomic<std::uint64_t> counter{0};
  v = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<std::uint64_t>(getpid()) << 32) ^ counter.fetch_add(0x9E3779B97F4A7C15ULL);
  v ^= v >> 31;  // splitmix64's finaliser
  v *= 0xBF58476D1CE4E5B9ULL;
  return v ^ (v >> 29);
}

std::string temp_name(const std::string& name) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uint64_t bits = random_bits();
  std::string temp = name.substr(0, std::min<std::size_t>(name.size(), NAME_MAX - kTempSuffix)) + ".tmp.";
  for (int i = 0; i < 6; ++i, bits /= 62) temp += kChars[bits % 62];
  return temp;
}

// Note [Writing past the file-size limit]
// A write past RLIMIT_FSIZE fails with EFBIG, and the kernel also sends the writing thread SIGXFSZ,
// whose default action kills the process, leaving the temporary file behind (strata-trace's handler,
// io/temp_file_registry.h, removes it; a library cannot count on one). So each write runs with
// SIGXFSZ blocked on its thread, and a SIGXFSZ that a failed write raised (EFBIG, and the signal
// pending now and not before) is taken back with sigtimedwait before the mask is restored: the
// failure is an Error like a full disk, and the destructor removes the temporary file. A SIGXFSZ
// pending before the write, or sent while no write failed, is left to act when unblocked.
class HoldFileSizeSignal {
 public:
  HoldFileSizeSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    was_pending_ = pending();
  }
  ~HoldFileSizeSignal() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  HoldFileSizeSignal(const HoldFileSizeSignal&) = delete;
  HoldFileSizeSignal& operator=(const HoldFileSizeSignal&) = delete;
  void write_failed(int err) {
    if (err != EFBIG || was_pending_ || !pending()) return;
    const timespec now{};
    while (sigtimedwait(&set_, nullptr, &now) < 0 && errno == EINTR) {
    }
  }

 private:
  bool pending() const {
    sigset_t set;
    return sigpending(&set) == 0 && sigismember(&set, SIGXFSZ) == 1;
  }
  sigset_t set_;
  sigset_t old_;
  bool was_pending_ = false;
};

// 0, or the errno of the first failure.
int write_all(int fd, std::string_view content) {
  HoldFileSizeSignal hold;  // Note [Writing past the file-size limit]
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      hold.write_failed(err);
      return err;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

int close_checked(int fd) { return close(fd) != 0 && errno != EINTR ? errno : 0; }

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string label) : path_(std::move(path)), label_(std::move(label)) {
  const std::string prefix = label_.empty() ? "" : label_ + ": ";
  STRATA_CHECK(!path_.empty(), prefix, "expected a file name, got ''");
  target_ = resolve_output_path(path_);  // Note [Writing where open() would]
  STRATA_CHECK(target_.error != EISDIR, prefix, "'", path_, "' is a directory");
  if (target_.error) fail("cannot write", target_.error);
  if (target_.exists) {
    // open()'s own verdict on writing it (EACCES, EROFS, ETXTBSY...), through the path as given; for
    // a FIFO this waits for a reader, as open() does.
    const int fd = open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) fail("cannot write", errno);
    if (!S_ISREG(target_.st.st_mode)) {
      mode_ = Mode::kStream;
      fd_ = fd;
      return;
    }
    in_place_fd_ = fd;
  }
  // Note [When the file is written in place]
  const bool replaceable = target_.dir_fd >= 0 && !(target_.exists && target_.st.st_nlink > 1);
  const int err = replaceable ? create_temp() : 0;
  if (fd_ >= 0 && target_.exists && match_old_owner_and_mode() != 0) discard_temp();
  if (fd_ >= 0) {
    if (in_place_fd_ >= 0) close(std::exchange(in_place_fd_, -1));
    return;
  }
  if (in_place_fd_ < 0) fail("cannot write", err);
  mode_ = Mode::kInPlace;
}

// Note [Permissions of the output]
// mkstemp creates 0600 files, and a rename keeps that: an output only its owner can read. Creating
// the temporary file ourselves with open(O_CREAT | O_EXCL, 0666) lets the kernel apply the umask
// (and a directory's default ACL) as for any new file; replacing an existing file keeps its mode,
// owner and group, as writing it in place with open() would (or it is written in place: Note [When
// the file is written in place]). The name is random, and O_EXCL makes it ours.
int AtomicFile::create_temp() {
  int err = 0;
  BlockCleanupSignals blocked;  // Note [Temporary files and signals]
  std::string name;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    name = temp_name(target_.name);
    fd_ = openat(target_.dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    err = fd_ < 0 ? errno : 0;
    if (fd_ < 0 && err != EEXIST) break;
  }
  if (fd_ < 0) return err;
  slot_ = register_temp_file(target_.dir_fd, name);
  if (slot_ < 0) {
    close(std::exchange(fd_, -1));
    unlinkat(target_.dir_fd, name.c_str(), 0);
    return EMFILE;
  }
  temp_name_ = name;
  temp_path_ = target_.dir_text + "/" + name;
  return 0;
}

int AtomicFile::match_old_owner_and_mode() {
  const struct stat& old = target_.st;
  struct stat now {};
  if (fstat(fd_, &now) != 0) return errno;
  if ((now.st_uid != old.st_uid || now.st_gid != old.st_gid) && fchown(fd_, old.st_uid, old.st_gid) != 0) return errno;
  return fchmod(fd_, old.st_mode & 0777) != 0 ? errno : 0;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  discard_temp();
  if (in_place_fd_ >= 0) close(in_place_fd_);
  in_place_fd_ = -1;
}

void AtomicFile::discard_temp() noexcept {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_name_.empty()) unlinkat(target_.dir_fd, temp_name_.c_str(), 0);  // then unregister: Note [Temporary files and signals]
  temp_name_.clear();
  temp_path_.clear();
  unregister_temp_file(slot_);
  slot_ = -1;
}

void AtomicFile::fail(const std::string& what, int err) const {
  detail::throw_error(detail::str_cat(label_.empty() ? "" : label_ + ": ", what, " '", path_, "': ", std::strerror(err)));
}

void AtomicFile::write(std::string_view content) {
  append(content);
  finish();
}

void AtomicFile::append(std::string_view part) {
  STRATA_CHECK(!written_ && (fd_ >= 0 || in_place_fd_ >= 0), "'", path_, "' was already written");
  if (mode_ == Mode::kInPlace) {  // Note [When the file is written in place]
    if (!rewriting_ && pending_.size() + part.size() <= kInPlaceHoldBytes) {
      pending_.append(part);
      return;
    }
    if (!rewriting_) {
      rewriting_ = true;
      const int err = ftruncate(in_place_fd_, 0) != 0 ? errno : write_all(in_place_fd_, pending_);
      if (err) fail("cannot write", err);
      std::string().swap(pending_);
    }
    if (const int err = write_all(in_place_fd_, part)) fail("cannot write", err);
  } else if (const int err = write_all(fd_, part)) {
    fail("cannot write", err);
  }
}

void AtomicFile::finish() {
  STRATA_CHECK(!written_ && (fd_ >= 0 || in_place_fd_ >= 0), "'", path_, "' was already written");
  if (mode_ != Mode::kInPlace) {
    // A FIFO or a device cannot be synced (EINVAL): only the temporary file is.
    if (mode_ == Mode::kReplace && fsync(fd_) != 0) fail("cannot write", errno);
    if (const int err = close_checked(std::exchange(fd_, -1))) fail("cannot write", err);
  }
  written_ = true;
}

// Note [Checking that a file fits]
// A file that cannot fit is refused before a byte of it is written, naming both sizes: over the
// file-size limit the write would fail (EFBIG, Note [Writing past the file-size limit]) and on a full
// file system with ENOSPC, each after writing what fits, which for a large file is slow and fills
// the disk for every other process meanwhile. The free space is what the writer may use (f_bavail,
// or f_bfree for root, who may use the reserved blocks), plus, for a file written in place, the blocks of the file it truncates. The check is a
// forecast, not a reservation: another writer may take the space meanwhile, and the write then fails
// as before.
void AtomicFile::check_fits(std::uint64_t bytes) const {
  const std::string prefix = label_.empty() ? "" : label_ + ": ";
  const int fd = mode_ == Mode::kInPlace ? in_place_fd_ : fd_;
  if (mode_ == Mode::kStream || fd < 0) return;
  rlimit limit{};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && bytes > limit.rlim_cur)
    detail::throw_error(detail::str_cat(prefix, "cannot write '", path_, "': the file is ", bytes,
                                        " bytes, over the file-size limit (RLIMIT_FSIZE, ulimit -f) of ", limit.rlim_cur, " bytes"));
  struct statvfs fs {};
  if (fstatvfs(fd, &fs) != 0) return;  // no figure to compare with: the write will tell
  std::uint64_t free_bytes = 0;
  const std::uint64_t blocks = geteuid() == 0 ? fs.f_bfree : fs.f_bavail;  // root may use the reserved blocks
  if (__builtin_mul_overflow(blocks, std::uint64_t(fs.f_frsize), &free_bytes)) return;
  struct stat st {};
  if (mode_ == Mode::kInPlace && fstat(fd, &st) == 0) free_bytes += std::uint64_t(st.st_blocks) * 512;
  if (bytes > free_bytes)
    detail::throw_error(detail::str_cat(prefix, "cannot write '", path_, "': the file is ", bytes, " bytes, but its file system has ",
                                        free_bytes, " bytes free"));
}

void AtomicFile::publish() {
  STRATA_CHECK(written_ && !done_, "'", path_, "' is not ready to publish");
  done_ = true;
  if (mode_ == Mode::kInPlace) {
    const int fd = std::exchange(in_place_fd_, -1);
    int err = rewriting_ ? 0 : ftruncate(fd, 0) != 0 ? errno : write_all(fd, pending_);
    if (!err && fsync(fd) != 0) err = errno;
    const int close_err = close_checked(fd);
    if (err || close_err) fail("cannot write", err ? err : close_err);
    return;
  }
  if (mode_ == Mode::kStream) return;  // written directly
  if (renameat(target_.dir_fd, temp_name_.c_str(), target_.dir_fd, target_.name.c_str()) != 0)
    fail("cannot write", errno);  // the destructor cleans up
  temp_name_.clear();
  temp_path_.clear();
  unregister_temp_file(slot_);
  slot_ = -1;
}

void AtomicFile::commit(std::string_view content) {
  write(content);
  publish();
}

}  // namespace strata::tracer
