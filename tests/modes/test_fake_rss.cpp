// tests/modes/test_fake_rss.cpp: a training step of a model with about 10^9 parameters (4 GB of
// float32 weights, as much again in gradients) runs under FakeTensorMode, counted by an OpCounter and
// a FlopCounterMode, with the process's peak RSS under 200 MB. A process of its own, so no other test
// raises the peak it measures.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include "modes/flop_counter.h"
#include "tracer/cli/mlp_experiment.h"

using namespace strata;
using namespace strata::tracer;

namespace {
long peak_rss_kb() {
  rusage usage{};
  REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
  return usage.ru_maxrss;  // kilobytes on Linux
}
}  // namespace

TEST_CASE("a 10^9-parameter step under FakeTensorMode: the real op sequence, upstream's FLOPs, under 200 MB") {
  // 32768 -> 16384 -> 16384 -> 16384: 32768*16384 + 2*16384*16384 weights and 3*16384 biases.
  const MlpConfig config{0, {32768, 16384, 16384, 16384}, 8, 0.1};
  constexpr std::int64_t kParameters = 32768LL * 16384 + 2LL * 16384 * 16384 + 3LL * 16384;
  static_assert(kParameters == 1073790976);

  FakeTensorMode fake;
  FlopCounterMode flops;
  run_step(config, PhasedMode::of(flops), &fake);
  // forward: 2 * batch * (sum of in*out) = 16 * 2^30; backward: twice that minus layer 1's grad_input.
  CHECK(flops.to_json()["phases"]["forward"]["total"] == 16LL * 1073741824);
  CHECK(flops.to_json()["phases"]["backward"]["total"] == 2 * 16LL * 1073741824 - 16LL * 32768 * 16384);

  FakeTensorMode fake2;
  const TracedStep traced = traced_step(config, &fake2);
  const TracedStep small = traced_step(MlpConfig{0, {32, 16, 16, 16}, 8, 0.1});  // same depth, real
  for (const char* phase : {"forward", "backward", "optimizer"}) CHECK(traced.counter.sequence(phase) == small.counter.sequence(phase));
  std::int64_t numel = 0;
  for (const Tensor& p : traced.step.params_after) numel += p.numel();
  CHECK(numel == kParameters);

  const long peak = peak_rss_kb();
  MESSAGE("peak RSS: ", peak, " KB");
  CHECK(peak < 200 * 1024);
}
