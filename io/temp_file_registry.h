// io/temp_file_registry.h: the temporary files a fatal signal must remove. AtomicFile registers
// each temporary file here while it exists; install_temp_file_cleanup_on_signals makes every
// terminating signal remove them before the process dies by that signal.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "../core/util/non_copyable.h"

namespace strata::tracer {

// Makes every signal whose default action terminates the process and that can be caught (SIGINT,
// SIGTERM, SIGHUP, SIGPIPE, SIGALRM, SIGUSR1, SIGXCPU, SIGSEGV, the real-time signals, ...) remove
// every registered temporary file, then act as it did before: the default action kills the process
// by that signal (a shell sees "killed by SIGINT"), a handler installed earlier (a sanitizer's) runs.
// SIGXFSZ from the file-size limit is the exception: it makes the write fail (EFBIG), which the
// writer reports. Signals that are ignored when this is called stay ignored. Calling it again does
// nothing. For executables: a library should not take over signals, so nothing calls this
// implicitly (strata-trace's main does). See Note [Temporary files and signals].
void install_temp_file_cleanup_on_signals();

// Blocks every signal that the cleanup handles, for as long as it lives: a temporary
// file is created and registered inside one, so no signal falls between the two on this thread, and
// a handler running on another thread waits until this one is gone.
class BlockCleanupSignals : NonCopyable {
 public:
  BlockCleanupSignals();
  ~BlockCleanupSignals();

 private:
  sigset_t old_;
};

// Registers `name` in the directory `dir_fd` (which must stay open until unregistered). Returns the
// slot, or -1 when the name does not fit or every slot is taken.
int register_temp_file(int dir_fd, const std::string& name);
// Call only after the file was renamed or unlinked.
void unregister_temp_file(int slot);

// The names (without their directory) of the temporary files that would be removed now, for tests.
std::vector<std::string> registered_temp_files();
// What the signal handler does before dying: unlink every registered temporary file.
// Async-signal-safe.
void remove_registered_temp_files() noexcept;

}  // namespace strata::tracer
