// tests/fuzz/api_world.h: the state one API-fuzzer input runs against (a bounded pool of live tensors,
// custom objects, generators, the leaves whose grads it set) and the rule every call is run under:
// a strata::Error is a refusal, anything else that leaves a call is a bug, reported by abort().
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/generator.h"
#include "core/dispatch/ivalue.h"
#include "core/tensor.h"

namespace strata::fuzz {

inline constexpr std::size_t kSlots = 8;
// Tensors with real storage stay below this many elements, and so do the outputs of every call
// (bounded before the call by running it on meta tensors): inputs stay fast and far below the
// fuzzer's -rss_limit_mb. Views may be larger (an expand to [2^40] costs nothing); such a "huge"
// tensor, and everything made from it, is tainted, and only view ops and metadata reads take it.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 16;

struct Slot {
  Tensor tensor;
  bool tainted = false;
};

struct World {
  std::array<Slot, kSlots> slots;
  std::array<IntrusivePtr<CustomObject>, 4> objects;
  std::vector<Generator> generators;
  std::vector<Tensor> leaves;  // every tensor a grad may have been set on: cleared at the end
  // Every tensor with a history the pool held, kept to the end of the input (Note [Graphs a write made
  // unusable are released at the end]).
  std::vector<Tensor> histories;
  bool verbose = false;  // STRATA_FUZZ_VERBOSE: name each call on stderr

  Slot& slot(std::uint8_t b) { return slots[b % kSlots]; }
};

// A CPU tensor with more elements than kMaxElements (a view: nothing allocates that many).
inline bool is_huge(const Tensor& t) { return t.defined() && t.device() == Device::CPU && t.numel() > kMaxElements; }

[[noreturn]] inline void fail(const char* where, const char* what, const char* detail) {
  std::fprintf(stderr, "\n==strata api fuzzer== BUG in %s: %s: %s\n", where, what, detail);
  std::fflush(stderr);
  std::abort();
}

// Runs `fn`. True when it returned; false when it threw a strata::Error with a message (a refusal).
// An InternalError (a broken invariant), an Error without a message, or any other exception is a bug.
// A call that takes longer than kSlowCall is a bug too: no input here has more than kMaxElements
// elements, so seconds mean a loop over sizes that should not run (an empty tensor's huge outer
// dimensions). libFuzzer's -timeout catches a hang; this also fails a slow seed in the replay tests.
inline constexpr std::chrono::seconds kSlowCall{2};

inline void check_duration(const char* where, std::chrono::steady_clock::time_point start) {
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (elapsed > kSlowCall) {
    const std::string seconds = std::to_string(std::chrono::duration<double>(elapsed).count()) + " s";
    fail(where, "a call took longer than it may", seconds.c_str());
  }
}

template <typename Fn>
bool attempt(const char* where, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  try {
    fn();
    check_duration(where, start);
    return true;
  } catch (const InternalError& e) {
    fail(where, "strata::InternalError", e.what());
  } catch (const Error& e) {
    if (e.message().empty()) fail(where, "strata::Error without a message", e.what());
    check_duration(where, start);
    return false;
  } catch (const std::exception& e) {
    fail(where, typeid(e).name(), e.what());
  } catch (...) {
    fail(where, "an exception that is not a std::exception", "");
  }
}

}  // namespace strata::fuzz
