// tests/tracer/cli/test_trace_signals.cpp: strata-trace killed by any signal whose default action
// terminates leaves no temporary file and still dies by that signal; a crash cleans up and crashes
// as before; a file-size limit (ulimit -f) is a write error. Real child processes throughout.
#include <fcntl.h>
#include <sys/mman.h>

#include <chrono>
#include <thread>

#include "tests/tracer/cli/cli_test_helpers.h"
#include "tests/tracer/cli/subprocess.h"
#include "io/atomic_file.h"
#include "io/temp_file_registry.h"

namespace test_trace_signals {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;
namespace fs = std::filesystem;

namespace {
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;  // its SIGSEGV, SIGBUS and SIGFPE handlers report, then abort
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// What a process killed by `sig` may show: the signal itself, or, where AddressSanitizer takes the
// signal first and is told to abort (ASAN_OPTIONS=abort_on_error=1), SIGABRT or exit code 1.
bool died_by(const ChildExit& e, int sig) {
  if (e.timed_out) return false;
  if (kAddressSanitizer && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE))
    return e.signaled ? e.code == sig || e.code == SIGABRT : e.code != 0;
  return e.signaled && e.code == sig;
}

// Runs `body` in a forked child with every signal at its default action (not doctest's handlers),
// and waits for it.
template <typename Body>
ChildExit in_child(Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);
    body();
    ::_exit(0);
  }
  return wait_child(pid, std::chrono::seconds(60));
}

// Runs body(dir) in a child (in_child) with the cleanup installed, `dir` a fresh scratch directory,
// and checks that the child died by `sig` and left `dir` empty.
template <typename Body>
void check_dies_leaving_nothing(int sig, Body body) {
  const fs::path dir = scratch_dir();
  const ChildExit e = in_child([&] {
    tracer::install_temp_file_cleanup_on_signals();
    body(dir);
  });
  CHECK(!e.timed_out);
  CHECK(died_by(e, sig));
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

int recurse(int depth, int limit) {  // a stack overflow for any realistic limit
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return depth >= limit ? 0 : recurse(depth + 1, limit) + frame[0];
}
volatile int g_depth_limit = 1 << 30;
}  // namespace

TEST_CASE("a crash removes the temporary files, then crashes as it would have") {
  for (const char* kind : {"fault", "stack overflow", "installed twice, then SIGUSR1"}) {
    INFO(kind);
    const std::string what = kind;
    check_dies_leaving_nothing(what[0] == 'i' ? SIGUSR1 : SIGSEGV, [&](const fs::path& dir) {
      if (what[0] == 'i') tracer::install_temp_file_cleanup_on_signals();  // must not chain to itself (a hang)
      tracer::AtomicFile file((dir / "o.json").string());
      file.write("partial");
      if (what[0] == 'f') {
        void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *static_cast<volatile int*>(page) = 1;
      } else if (what[0] == 's') {
        recurse(0, g_depth_limit);
      } else {
        ::raise(SIGUSR1);
      }
    });
  }
}

TEST_CASE("a signal taken by another thread while a temporary file is being registered still removes it") {
  // The signal goes to the only thread that does not block it, an idle one, while the main thread has
  // created its file and not yet registered it: the handler must wait for the registration.
  check_dies_leaving_nothing(SIGTERM, [](const fs::path& dir) {
    std::thread idle([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });
    {
      tracer::BlockCleanupSignals registering;
      const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const int fd = ::openat(dir_fd, "o.json.tmp.test", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      ::close(fd);
      ::kill(::getpid(), SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the idle thread takes it meanwhile
      tracer::register_temp_file(dir_fd, "o.json.tmp.test");
    }
    idle.join();
  });
}

TEST_CASE("a fault signal sent to the registering thread waits for the registration, then cleans up") {
  // SIGTRAP (as SIGSYS, SIGSEGV...) sent by kill() to the thread that is registering a file: were it
  // not blocked there, its handler would wait for the registration it interrupted, forever.
  // The registered file is removed all the same.
  check_dies_leaving_nothing(SIGTRAP, [](const fs::path& dir) {
    tracer::AtomicFile earlier((dir / "o.json").string());
    earlier.write("partial");
    tracer::BlockCleanupSignals registering;
    ::raise(SIGTRAP);
  });
}

#ifdef STRATA_TRACE_EXE
TEST_CASE("strata-trace killed by any terminating signal leaves no temporary file, and dies by that signal") {
  std::vector<int> signals = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,    SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
                              SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE,   SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
                              SIGVTALRM, SIGPROF, SIGIO, SIGSYS, SIGSTKFLT, SIGPWR, SIGRTMIN, SIGRTMIN + 1, SIGRTMAX};
  const fs::path dir = scratch_dir(), logs = scratch_dir();
  for (const int sig : signals) {
    INFO("signal ", sig, " (", std::string(::strsignal(sig)), ")");
    // Big enough to run for a long while: the temporaries exist from the start.
    const pid_t pid = spawn_child({STRATA_TRACE_EXE, "--sizes", "4096,4096,4096", "--batch", "4096", "--json-out",
                                   (dir / "o.json").string(), "--dump-tensors", (dir / "t.json").string()},
                                  (logs / "out").string(), (logs / "err").string(), ChildOptions{});
    REQUIRE(pid > 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (entries(dir) < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(entries(dir) == 2);  // o.json.tmp.XXXXXX and t.json.tmp.XXXXXX
    ::kill(pid, sig);
    const ChildExit e = wait_child(pid, std::chrono::seconds(60));
    CHECK(died_by(e, sig));
    CHECK(fs::is_empty(dir));
    for (const auto& entry : fs::directory_iterator(dir)) fs::remove(entry.path());
  }
  fs::remove_all(dir);
  fs::remove_all(logs);
}

// LLVM's OpenMP runtime (libomp, which clang links for -fopenmp) registers itself in a /dev/shm file
// as the process loads and aborts there, before main, when RLIMIT_FSIZE is below that file's size.
// The gcc builds (libgomp) run this case; the clang sanitizer build cannot.
#if defined(__clang__)
constexpr bool kLlvmOpenMP = true;
#else
constexpr bool kLlvmOpenMP = false;
#endif

TEST_CASE("a file-size limit (ulimit -f) is a write error: one line, exit code 2, no file" * doctest::skip(kLlvmOpenMP)) {
  const fs::path dir = scratch_dir(), logs = scratch_dir();
  struct Case {
    rlim_t limit;
    std::vector<std::string> args;
    std::string error;
  };
  const std::string o = (dir / "o.json").string(), t = (dir / "t.json").string();
  // The seed's --dump-tensors is about 45 kB and its JSON about 1 kB; files are written before stdout.
  const std::vector<Case> cases = {
      {4096, {"--json-out", o, "--dump-tensors", t}, "--dump-tensors: cannot write '" + t + "': File too large"},
      {512, {"--json-out", o}, "--json-out: cannot write '" + o + "': File too large"},
      {512, {"--sizes", "3,2"}, "cannot write standard output: File too large"},
  };
  for (const Case& c : cases) {
    INFO(c.error);
    std::vector<std::string> argv{STRATA_TRACE_EXE};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ChildOptions options;
    options.file_size_limit = c.limit;
    const pid_t pid = spawn_child(argv, (logs / "out").string(), (logs / "err").string(), options);
    REQUIRE(pid > 0);
    const ChildExit e = wait_child(pid, std::chrono::seconds(60));
    CHECK(!e.signaled);
    CHECK(e.code == 2);
    CHECK(read_text((logs / "err").string()) == "strata-trace: error: " + c.error + "\n");
    CHECK(fs::is_empty(dir));
    for (const auto& entry : fs::directory_iterator(dir)) fs::remove(entry.path());
  }
  fs::remove_all(dir);
  fs::remove_all(logs);
}
#endif

}  // namespace test_trace_signals
