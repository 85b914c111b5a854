// core/util/warning.cpp: the default warning handler and the per-thread handler slot.
#include "core/util/warning.h"

#include <cstdio>

namespace strata {

namespace {
WarningHandler* default_handler() {
  static WarningHandler handler;  // stateless: one for every thread
  return &handler;
}
thread_local WarningHandler* tls_handler = nullptr;  // null: the default
}  // namespace

void WarningHandler::process(const Warning& warning) {
  // One write of the whole line, so warnings from several threads do not interleave within a line.
  const std::string line = "Warning: " + warning.msg() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

WarningHandler* get_warning_handler() noexcept { return tls_handler ? tls_handler : default_handler(); }

void set_warning_handler(WarningHandler* handler) noexcept { tls_handler = handler; }

void warn(const Warning& warning) { get_warning_handler()->process(warning); }

void detail::warn_at(SourceLocation where, std::string message) { warn(Warning(std::move(message), where)); }

}  // namespace strata
