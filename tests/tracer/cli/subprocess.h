// tests/tracer/cli/subprocess.h: running the built strata-trace as a child process (posix_spawn, or fork
// and exec to set a user or a file-size limit), with stdout and stderr sent to files, for what only a
// real process shows: exit status, signals, stdio, permissions, resource limits.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace strata::testing {

struct ChildExit {
  bool signaled = false;
  int code = -1;           // the exit code, or the signal number when `signaled`
  bool timed_out = false;  // wait_child(pid, timeout) killed it (then signaled by SIGKILL)
};

struct ChildOptions {
  std::optional<uid_t> user;              // run as this user and group, without supplementary groups (root only)
  std::optional<rlim_t> file_size_limit;  // RLIMIT_FSIZE in bytes, as `ulimit -f` sets it
};

inline std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  return cargv;
}

// Starts `argv` (argv[0] is the program's path) with stdout to `stdout_path` and stderr to
// `stderr_path` (created or truncated), every signal at its default action and none blocked.
// Returns the pid, or -1.
inline pid_t spawn_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                         const std::string& stderr_path) {
  std::vector<char*> cargv = c_argv(argv);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  if (posix_spawn(&pid, cargv[0], &actions, &attr, cargv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// The same, with `options`: fork, set them up, exec (only async-signal-safe calls in between). These
// children never dump core (RLIMIT_CORE 0): the tests kill them with SIGSEGV, SIGQUIT...
inline pid_t spawn_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                         const std::string& stderr_path, const ChildOptions& options) {
  std::vector<char*> cargv = c_argv(argv);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) _exit(126);
  if (options.file_size_limit) {
    const rlimit limit{*options.file_size_limit, *options.file_size_limit};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
  }
  if (options.user && (setgroups(0, nullptr) != 0 || setgid(*options.user) != 0 || setuid(*options.user) != 0))
    _exit(126);
  execve(cargv[0], cargv.data(), environ);
  _exit(127);
}

inline ChildExit child_exit(int status) {
  if (WIFSIGNALED(status)) return {true, WTERMSIG(status)};
  return {false, WEXITSTATUS(status)};
}

inline ChildExit wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return {};
  return child_exit(status);
}

// wait_child, but a child still running after `timeout` is killed (SIGKILL) and reported as timed out.
inline ChildExit wait_child(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (pid_t r; (r = waitpid(pid, &status, WNOHANG)) != pid;) {
    if (r < 0 && errno != EINTR) return {};
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      ChildExit e = wait_child(pid);
      e.timed_out = true;
      return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return child_exit(status);
}

}  // namespace strata::testing
