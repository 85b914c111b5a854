// core/util/error.cpp: building and throwing strata::Error (kept out of line so checks stay small).
#include "core/util/error.h"

namespace strata {

void Error::set_op(std::string op) {
  op_ = std::move(op);
  what_ = "[" + op_ + "] " + message_;
}

namespace detail {

void throw_error(std::string message) { throw Error(std::move(message)); }

void throw_internal(const char* condition, const char* file, int line, std::string message) {
  throw InternalError(str_cat("internal assert failed: ", condition, " at ", file, ":", line,
                              message.empty() ? "" : ": ", message,
                              " (this is a bug in strata, please report it)"));
}

}  // namespace detail
}  // namespace strata
