// tests/ops/test_dispatch_trace_threads.cpp: dispatch tracing is per thread (Note [Tracing is per
// thread]): a thread's guard traces only that thread's ops, while other threads run ops untraced or
// under guards of their own; the process default (STRATA_DISPATCH_TRACE) applies where a thread has none.
#include <doctest/doctest.h>

#include <barrier>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/dispatch/dispatch_trace.h"
#include "ops/functions.h"

namespace test_dispatch_trace_threads {  // Note [Test files in unity builds]

using namespace strata;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

constexpr int kOps = 300;

}  // namespace

TEST_CASE("a thread's trace holds only its own ops while other threads run and trace theirs" * doctest::test_suite("threads")) {
  const Tensor x = ones_like(strata::empty({4}));
  std::ostringstream traced_neg, traced_relu;
  // Every thread runs its ops between the two barriers, so the guards' lifetimes overlap the others' ops.
  std::barrier sync(4);
  std::thread neg_thread([&] {
    DispatchTraceGuard guard(traced_neg);
    sync.arrive_and_wait();
    for (int i = 0; i < kOps; ++i) neg(x);
    sync.arrive_and_wait();
  });
  std::thread relu_thread([&] {
    sync.arrive_and_wait();
    {
      DispatchTraceGuard guard(traced_relu);
      for (int i = 0; i < kOps; ++i) relu(x);
    }
    for (int i = 0; i < kOps; ++i) relu(x);  // no longer traced
    sync.arrive_and_wait();
  });
  std::thread untraced([&] {
    sync.arrive_and_wait();
    for (int i = 0; i < kOps; ++i) exp(x);
    sync.arrive_and_wait();
  });
  sync.arrive_and_wait();
  CHECK_FALSE(dispatch_trace_enabled());  // the main thread has no stream of its own
  for (int i = 0; i < kOps; ++i) mul(x, x);
  sync.arrive_and_wait();
  neg_thread.join();
  relu_thread.join();
  untraced.join();

  const std::vector<std::string> negs = lines_of(traced_neg.str()), relus = lines_of(traced_relu.str());
  CHECK(negs == std::vector<std::string>(kOps, "aten.neg.default(f32[4]) [CPU] -> CPU: kernel neg"));
  CHECK(relus == std::vector<std::string>(kOps, "aten.relu.default(f32[4]) [CPU] -> CPU: kernel relu"));
  CHECK_FALSE(dispatch_trace_enabled());
}

TEST_CASE("a thread without a stream of its own traces into the process default" * doctest::test_suite("threads")) {
  // STRATA_DISPATCH_TRACE=1 sets the default to stderr when the library loads; here it is set the same
  // way, with stderr captured.
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  const Tensor x = ones_like(strata::empty({2}));
  detail::apply_dispatch_trace_environment("1");
  CHECK(dispatch_trace_enabled());
  neg(x);
  std::ostringstream own;
  {
    DispatchTraceGuard guard(own);  // a thread's own stream comes first
    relu(x);
  }
  std::ostringstream other_thread;
  std::thread([&] {
    exp(x);  // to the default too
    DispatchTraceGuard guard(other_thread);
    neg(x);
  }).join();
  set_dispatch_trace(nullptr);  // drops this thread's own stream (it has none): still the default
  relu(x);
  detail::apply_dispatch_trace_environment("0");
  CHECK_FALSE(dispatch_trace_enabled());
  neg(x);
  std::cerr.rdbuf(saved);
  CHECK(captured.str() ==
        "aten.neg.default(f32[2]) [CPU] -> CPU: kernel neg\n"
        "aten.exp.default(f32[2]) [CPU] -> CPU: kernel exp\n"
        "aten.relu.default(f32[2]) [CPU] -> CPU: kernel relu\n");
  CHECK(own.str() == "aten.relu.default(f32[2]) [CPU] -> CPU: kernel relu\n");
  CHECK(other_thread.str() == "aten.neg.default(f32[2]) [CPU] -> CPU: kernel neg\n");
}

}  // namespace test_dispatch_trace_threads
