// io/temp_file_registry.cpp: a fixed table of temporary files that a signal handler can read
// without allocating or locking, and the handler that removes them on every terminating signal.
#include "io/temp_file_registry.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace strata::tracer {

namespace {

// Note [Temporary files and signals]
// A signal that kills the process (Ctrl-C, `kill`, a closed pipe, a CPU or file-size limit, a timer,
// a crash) must not leave "out.json.tmp.XXXXXX" behind. So the handler covers every signal whose
// default action terminates the process and that can be caught (all but SIGKILL and SIGSTOP; the
// ones that stop, continue or are ignored by default kill nothing). It unlinks every registered
// temporary file, puts back the action that was there before and lets the signal act again:
// - sent by a process (kill, raise, abort): re-raised, so the process dies *by that signal* (a
//   shell stops a script on SIGINT only if it sees that) rather than with a made-up exit code;
// - a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE from the kernel): the handler returns and the faulting
//   instruction faults again, so an earlier handler (AddressSanitizer's) sees the real fault address.
//   Handlers run on an alternate stack, so a stack overflow on the main thread is cleaned up too.
// - SIGXFSZ from the file-size limit (`ulimit -f`) is not fatal here: the kernel sends it to the
//   writer itself (SI_USER from our own pid) and the write then fails with EFBIG, which AtomicFile
//   and stdout report as any failed write: one line, exit code 2, no file (Note [Output order]). An
//   output too big for the limit is then treated like one too big for the disk (ENOSPC), which is
//   already an error of that kind; dying by SIGXFSZ would leave no file either, but would not say
//   which output failed. SIGXFSZ sent by another process still kills, after the cleanup. (AtomicFile's
//   own writes block SIGXFSZ and take back the one they raise, so they never reach this handler, and
//   a program without it, a library's caller, gets the same Error: Note [Writing past the file-size
//   limit], atomic_file.cpp.)
// Registration: a slot's state is an always-lock-free atomic (0 free, 1 being filled, 2 holds a
// file) and its file a directory fd and a name (unlinkat is async-signal-safe; a directory fd works
// whatever the path's length and even if a directory on the way is renamed). Around "create the
// file, register it" every handled signal is blocked, so none falls between the two on this thread;
// a file is unregistered only after it was renamed or unlinked, so a signal in between unlinks a name
// that no longer exists, which is harmless. Blocking is per thread, and a signal sent to the process
// goes to any thread that does not block it (an idle OpenMP worker): so a handler on another thread
// first waits until no thread is between "create" and "register" (a counter kept by the blocking
// guard). The fault signals are blocked too: SIGSEGV, SIGTRAP or SIGSYS sent by kill() must not run
// the handler on the registering thread, where it would wait for itself forever. A real fault in
// that window (a few system calls) kills with the default action, without the cleanup: the kernel
// does not deliver a blocked fault. The window left: a handler reading a slot another thread refills.
constexpr int kSlots = 32;
struct Slot {
  std::atomic<int> state{0};
  int dir_fd = -1;
  char name[NAME_MAX + 1];
};
static_assert(std::atomic<int>::is_always_lock_free);
Slot g_slots[kSlots];

// Default action "Term" or "Core" in signal(7); the real-time signals are added at run time.
constexpr int kTerminatingSignals[] = {
    SIGHUP, SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT,   SIGBUS,  SIGFPE,  SIGUSR1, SIGSEGV, SIGUSR2,
    SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,   SIGSYS,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
};
// Re-executing the instruction raises these again.
bool is_fault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

sigset_t terminating_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kTerminatingSignals) sigaddset(&set, sig);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaddset(&set, sig);
  return set;
}

// Threads inside a BlockCleanupSignals: between creating a temporary file and registering it.
std::atomic<int> g_registering{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_previous[NSIG];  // written before the handler is installed, read by it
char g_alternate_stack[64 * 1024];

void on_terminating_signal(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  if (sig == SIGXFSZ && info->si_code == SI_USER && info->si_pid == getpid()) return;  // the write fails: EFBIG
  // A signal sent to the process may be delivered to any thread that does not block it (an OpenMP
  // worker, say) while another thread has created a file and not yet registered it: wait for that
  // thread to finish registering. It blocks these signals, so this never runs on it, and a fault
  // (raised by the faulting thread itself) does not wait.
  if (!(is_fault(sig) && info->si_code > 0))
    while (g_registering.load() != 0) {
    }
  remove_registered_temp_files();
  sigaction(sig, &g_previous[sig], nullptr);
  // `sig` is blocked while this runs: a re-raised one is delivered, with the old action, on return.
  if (!(is_fault(sig) && info->si_code > 0)) raise(sig);
  errno = saved_errno;
}

void use_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;  // one is set up already
  stack_t ours{};
  ours.ss_sp = g_alternate_stack;
  ours.ss_size = sizeof g_alternate_stack;
  sigaltstack(&ours, nullptr);
}

}  // namespace

void install_temp_file_cleanup_on_signals() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;  // again would make g_previous point at ourselves
  use_alternate_stack();
  struct sigaction action {};
  action.sa_sigaction = on_terminating_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  action.sa_mask = terminating_signals();  // one cleanup at a time
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sigismember(&action.sa_mask, sig) != 1) continue;
    struct sigaction& old = g_previous[sig];
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // e.g. nohup: stay immune
    sigaction(sig, &action, nullptr);
  }
}

BlockCleanupSignals::BlockCleanupSignals() {
  const sigset_t set = terminating_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_);
  g_registering.fetch_add(1);
}

BlockCleanupSignals::~BlockCleanupSignals() {
  g_registering.fetch_sub(1);
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

int register_temp_file(int dir_fd, const std::string& name) {
  if (name.size() > NAME_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      g_slots[i].dir_fd = dir_fd;
      std::memcpy(g_slots[i].name, name.c_str(), name.size() + 1);
      g_slots[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

std::vector<std::string> registered_temp_files() {
  std::vector<std::string> out;
  for (const Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) out.emplace_back(s.name);
  return out;
}

void remove_registered_temp_files() noexcept {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) unlinkat(s.dir_fd, s.name, 0);
}

}  // namespace strata::tracer
