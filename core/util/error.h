// core/util/error.h: strata::Error and the two check macros.
// STRATA_CHECK is for user errors (bad shapes, dtypes, arguments) and STRATA_INTERNAL_ASSERT for broken
// invariants inside strata. Both throw; the message is built only on failure. Nothing here aborts.
#pragma once

#include <exception>
#include <sstream>
#include <string>

namespace strata {

// Note [Errors name the op]
// Kernels and meta functions word their checks as PyTorch does ("mat1 and mat2 shapes cannot be
// multiplied (8x16 and 32x4)"). The dispatcher names the op: when an Error leaves an op for the first
// time it gains the prefix "[aten::mm] ". One place adds the context, so no check repeats it and a nested
// op (mm inside addmm's backward) is named as the innermost op that failed.
class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)), what_(message_) {}

  const char* what() const noexcept override { return what_.c_str(); }
  const std::string& message() const { return message_; }  // without the op prefix
  const std::string& op() const { return op_; }             // empty until an op is named
  void set_op(std::string op);

 private:
  std::string message_;
  std::string op_;
  std::string what_;
};

// A broken invariant inside strata (a bug), not a user error.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
[[noreturn]] void throw_error(std::string message);
[[noreturn]] void throw_internal(const char* condition, const char* file, int line, std::string message);
}  // namespace detail

}  // namespace strata

// Note [Checks cost nothing until they fail]
// The failure branch (building the message with an ostringstream, throwing) is a separate cold,
// never-inlined lambda. Inlined, it would bloat every hot function that checks anything: a larger
// stack frame, saved registers and a realigned stack on each call of a tiny op, for a branch that
// never runs. Now a check is one compare and a jump to a call.
#if defined(__GNUC__)
#define STRATA_COLD_LAMBDA [&]() __attribute__((noinline, cold))
#else
#define STRATA_COLD_LAMBDA [&]()
#endif

#define STRATA_CHECK(cond, ...)                                                        \
  do {                                                                                 \
    if (!(cond)) [[unlikely]]                                                          \
      STRATA_COLD_LAMBDA { ::strata::detail::throw_error(::strata::detail::str_cat(__VA_ARGS__)); }(); \
  } while (0)

#define STRATA_INTERNAL_ASSERT(cond, ...)                                              \
  do {                                                                                 \
    if (!(cond)) [[unlikely]]                                                          \
      STRATA_COLD_LAMBDA {                                                             \
        ::strata::detail::throw_internal(#cond, __FILE__, __LINE__, ::strata::detail::str_cat(__VA_ARGS__)); \
      }();                                                                             \
  } while (0)
