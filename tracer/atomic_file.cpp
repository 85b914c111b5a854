// tracer/atomic_file.cpp: a temporary file created with O_EXCL next to the destination, write + fsync +
// rename, and the registry of temporary files that a fatal signal removes.
#include "tracer/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace strata::tracer {

namespace {

// Note [Temporary files and signals]
// A signal that kills the process (Ctrl-C, `kill`, a closed pipe) must not leave "out.json.tmp.XXXXXX"
// behind. Every AtomicFile registers its temporary path in a fixed table of slots, which a handler
// can read without allocating or locking: a slot's state is an always-lock-free atomic (0 free,
// 1 being filled, 2 holds a path) and its path a fixed char array. The handler unlinks every path in
// state 2 (unlink is async-signal-safe), restores the default action and re-raises the signal, so the
// process still dies *by that signal* (a shell stops a script on SIGINT only if it sees that) rather
// than with a made-up exit code. Around "create the file, register it" the handled signals are
// blocked, so no signal can fall between the two; a file is unregistered only after it was renamed
// or unlinked, so a signal in between unlinks a name that no longer exists, which is harmless.
// The one window left: with several threads, a handler on one thread could read a slot that another
// thread is refilling at that instant; strata-trace writes its files from one thread.
constexpr int kSlots = 32;
struct Slot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free);
Slot g_slots[kSlots];

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

int register_temp_file(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

void cleanup_and_reraise(int sig) {
  remove_registered_temp_files();
  signal(sig, SIG_DFL);
  raise(sig);  // blocked while this handler runs: delivered, with the default action, when it returns
}

class BlockCleanupSignals {
 public:
  BlockCleanupSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kCleanupSignals) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockCleanupSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockCleanupSignals(const BlockCleanupSignals&) = delete;
  BlockCleanupSignals& operator=(const BlockCleanupSignals&) = delete;

 private:
  sigset_t old_;
};

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

std::string temp_name(const std::string& target) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uint64_t bits = random_bits();
  std::string name = target + ".tmp.";
  for (int i = 0; i < 6; ++i, bits /= 62) name += kChars[bits % 62];
  return name;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string label) : path_(std::move(path)), label_(std::move(label)) {
  const std::string prefix = label_.empty() ? "" : label_ + ": ";
  STRATA_CHECK(!path_.empty(), prefix, "expected a file name, got ''");
  STRATA_CHECK(path_.back() != '/', prefix, "'", path_, "' is a directory");

  // Note [Writing where open() would]
  // The data goes where Python's open(path, "w") would put it: through a symlink to an existing file
  // (renaming over the link would replace the link), and straight into an existing FIFO or device:
  // renaming over /dev/null or /dev/stdout would replace the device node (which root may do), and
  // such a file cannot be half-written anyway. A dangling symlink is replaced by the file.
  target_ = path_;
  struct stat st {};
  if (lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = realpath(path_.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    }
  }
  const bool exists = stat(target_.c_str(), &st) == 0;
  STRATA_CHECK(!(exists && S_ISDIR(st.st_mode)), prefix, "'", path_, "' is a directory");
  // open() refuses a file without write permission; a rename would silently replace it.
  if (exists && access(target_.c_str(), W_OK) != 0) fail("cannot write", errno);
  if (exists && !S_ISREG(st.st_mode)) {
    fd_ = open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) fail("cannot write", errno);
    return;
  }

  // Note [Permissions of the output]
  // mkstemp creates 0600 files, and a rename keeps that: an output only its owner can read. Creating
  // the temporary file ourselves with open(O_CREAT | O_EXCL, 0666) lets the kernel apply the umask
  // (and a directory's default ACL) as for any new file; replacing an existing file keeps its mode,
  // as writing it in place with open() would. The name is random, and O_EXCL makes it ours.
  int err = 0;
  {
    BlockCleanupSignals blocked;  // Note [Temporary files and signals]
    for (int attempt = 0; attempt < 100; ++attempt) {
      const std::string name = temp_name(target_);
      fd_ = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
      if (fd_ >= 0) {
        temp_path_ = name;
        break;
      }
      if (errno != EEXIST) break;
    }
    err = errno;
    if (fd_ >= 0) {
      slot_ = register_temp_file(temp_path_);
      if (slot_ < 0) {
        err = temp_path_.size() >= PATH_MAX ? ENAMETOOLONG : EMFILE;
        close(fd_);
        unlink(temp_path_.c_str());
        fd_ = -1;
        temp_path_.clear();
      }
    }
  }
  if (fd_ < 0) fail("cannot write", err);
  if (exists && fchmod(fd_, st.st_mode & 0777) != 0) {
    err = errno;
    discard();  // a throwing constructor gets no destructor call
    fail("cannot write", err);
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) unlink(temp_path_.c_str());  // then unregister: Note [Temporary files and signals]
  temp_path_.clear();
  unregister_temp_file(slot_);
  slot_ = -1;
}

void AtomicFile::fail(const std::string& what, int err) const {
  detail::throw_error(detail::str_cat(label_.empty() ? "" : label_ + ": ", what, " '", path_, "': ", std::strerror(err)));
}

void AtomicFile::write(std::string_view content) {
  STRATA_CHECK(fd_ >= 0 && !written_, "'", path_, "' was already written");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd_, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  // A FIFO or a device cannot be synced (EINVAL): only the temporary file is.
  if (!temp_path_.empty() && fsync(fd_) != 0) fail("cannot write", errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0 && errno != EINTR) fail("cannot write", errno);
  written_ = true;
}

void AtomicFile::publish() {
  STRATA_CHECK(written_ && !done_, "'", path_, "' is not ready to publish");
  done_ = true;
  if (temp_path_.empty()) return;  // written in place
  if (std::rename(temp_path_.c_str(), target_.c_str()) != 0) fail("cannot write", errno);  // the destructor cleans up
  temp_path_.clear();
  unregister_temp_file(slot_);
  slot_ = -1;
}

void AtomicFile::commit(std::string_view content) {
  write(content);
  publish();
}

void install_temp_file_cleanup_on_signals() {
  struct sigaction action {};
  action.sa_handler = cleanup_and_reraise;
  sigemptyset(&action.sa_mask);
  for (int sig : kCleanupSignals) sigaddset(&action.sa_mask, sig);  // one cleanup at a time
  for (int sig : kCleanupSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // e.g. nohup: stay immune
    sigaction(sig, &action, nullptr);
  }
}

std::vector<std::string> registered_temp_files() {
  std::vector<std::string> out;
  for (const Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) out.emplace_back(s.path);
  return out;
}

void remove_registered_temp_files() noexcept {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) unlink(s.path);
}

}  // namespace strata::tracer
