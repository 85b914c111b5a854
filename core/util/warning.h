// core/util/warning.h: warnings, in the shape of PyTorch's c10 (c10/util/Exception.h): a Warning holds its
// message and where it was raised, the calling thread's WarningHandler processes it, and the default
// handler prints "Warning: <message>" to stderr. STRATA_WARN raises one; STRATA_WARN_ONCE raises one
// the first time its line runs in the process (PyTorch's TORCH_WARN and TORCH_WARN_ONCE).
#pragma once

#include <cstdint>
#include <string>

#include "error.h"
#include "non_copyable.h"

namespace strata {

struct SourceLocation {
  const char* function;
  const char* file;
  std::uint32_t line;
};

class Warning {
 public:
  Warning(std::string message, SourceLocation where) : message_(std::move(message)), where_(where) {}
  const std::string& msg() const { return message_; }
  const SourceLocation& source_location() const { return where_; }

 private:
  std::string message_;
  SourceLocation where_;
};

// What happens to a warning. The default prints "Warning: <message>" and a newline to stderr; an
// application or a test installs its own to collect, log, silence, or throw (a handler may throw: the
// exception leaves the call that warned).
class WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  virtual void process(const Warning& warning);
};

// The calling thread's handler, as in c10: each thread starts with the default one. Setting null
// restores the default. The handler is not owned; it must outlive its use.
WarningHandler* get_warning_handler() noexcept;
void set_warning_handler(WarningHandler* handler) noexcept;

// Installs a handler on this thread for its scope (c10's WarningHandlerGuard).
class WarningHandlerGuard : NonCopyable {
 public:
  explicit WarningHandlerGuard(WarningHandler* handler) : previous_(get_warning_handler()) { set_warning_handler(handler); }
  ~WarningHandlerGuard() { set_warning_handler(previous_); }

 private:
  WarningHandler* previous_;
};

// Hands `warning` to the calling thread's handler.
void warn(const Warning& warning);

namespace detail {
[[gnu::cold, gnu::noinline]] void warn_at(SourceLocation where, std::string message);
}  // namespace detail

}  // namespace strata

#define STRATA_WARN(...) ::strata::detail::warn_at({__func__, __FILE__, __LINE__}, ::strata::detail::str_cat(__VA_ARGS__))

// Once per process for each place it is written: a function-local static, whose initialisation runs
// once even when threads race to it (if the handler throws, the next run of the line warns again).
#define STRATA_WARN_ONCE(...)                                    \
  do {                                                           \
    [[maybe_unused]] static const bool strata_warned_once_ = [&] { \
      STRATA_WARN(__VA_ARGS__);                                  \
      return true;                                               \
    }();                                                         \
  } while (0)
