// tests/distributed/test_funcol.cpp: the functional collectives' front ends (funcol.h) and the
// AsyncCollectiveTensor they return: values on thread ranks, upstream's local op sequence around each
// collective as DebugMode logs it, a wait on first use for other ops and none for views, wait()
// seen by modes.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/util/error.h"
#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/fake_process_group.h"
#include "distributed/funcol.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "modes/debug_mode.h"
#include "modes/fake_tensor.h"
#include "ops/functions.h"

namespace test_funcol {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;
using tracer::DebugMode;
using tracer::DebugModeOptions;

namespace {
// rank r's [2, 3] block: r * 10 + 0 .. 5.
Tensor block(int rank) { return arange(6, {ScalarType::Float32}).reshape({2, 3}) + 10.0 * rank; }

DebugModeOptions no_outputs() {
  DebugModeOptions o;
  o.record_output = false;
  return o;
}

// Whether `log` shows chunk as aten::chunk: where chunk reaches modes (called below Autograd, as in
// a DTensor's handler), else as the split.Tensor it decomposes to before dispatch. Either way the
// whole log is compared.
bool chunk_dispatches(const std::string& log) { return log.find("aten::chunk(") != std::string::npos; }
}  // namespace

TEST_CASE("funcol on 4 thread ranks: gathered, scattered and reduced values, wrapped until waited" *
          doctest::test_suite("threads")) {
  std::mutex mutex;
  std::vector<std::string> failures;
  spawn(4, [&](int rank) {
    const auto fail = [&](const std::string& what) {
      const std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("rank " + std::to_string(rank) + ": " + what);
    };
    std::vector<Tensor> blocks;
    for (int r = 0; r < 4; ++r) blocks.push_back(block(r));
    const Tensor g0 = funcol::all_gather_tensor(block(rank), 0, "0");
    if (AsyncCollectiveTensor::of(g0) == nullptr) fail("gather_dim 0 is not an AsyncCollectiveTensor");
    if (!AsyncCollectiveTensor::wait(g0).equal(cat(blocks, 0))) fail("gather_dim 0 values");
    const Tensor g1 = funcol::all_gather_tensor(block(rank), 1, "0");
    if (AsyncCollectiveTensor::of(g1) != nullptr) fail("gather_dim 1 is still wrapped");
    if (!g1.equal(cat(blocks, 1))) fail("gather_dim 1 values");
    // Every rank scatters the same [2, 8]; rank r gets 4 times its column pair along dim 1.
    const Tensor wide = arange(16, {ScalarType::Float32}).reshape({2, 8});
    const Tensor rs = funcol::reduce_scatter_tensor(wide, "sum", 1, "0");
    if (!AsyncCollectiveTensor::wait(rs).equal(wide.narrow(1, 2 * rank, 2) * 4.0)) fail("reduce_scatter dim 1");
    const Tensor ar = funcol::all_reduce(block(rank), "max", "0");
    if (!AsyncCollectiveTensor::wait(ar).equal(block(3))) fail("all_reduce max");
    // all_to_all_single without splits: row r of every rank's [4, 3] goes to rank r.
    const Tensor a2a = funcol::all_to_all_single(block(rank).reshape({-1}).narrow(0, 0, 4).reshape({4, 1}), {}, {}, "0");
    std::vector<float> got;
    const Tensor plain = AsyncCollectiveTensor::wait(a2a);
    for (int r = 0; r < 4; ++r) got.push_back(plain[r].item<float>());
    const std::vector<float> want{10.0F * 0 + rank, 10.0F * 1 + rank, 10.0F * 2 + rank, 10.0F * 3 + rank};
    if (got != want) fail("all_to_all_single");
  });
  CHECK(failures.empty());
  for (const std::string& f : failures) MESSAGE(f);
}

TEST_CASE("wait_tensor on a view of a collective's output waits for the collective" * doctest::test_suite("threads")) {
  std::vector<float> got(2, -1);
  spawn(2, [&](int rank) {
    // Rank 1 joins late: rank 0's view must not be read before the gather is complete.
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const Tensor out = all_gather_into_tensor(full({1, 2}, 1.0 + rank), 2, "0");
    const Tensor view = out.narrow(0, 1, 1);  // rank 1's row
    got[static_cast<std::size_t>(rank)] = wait_tensor(view)[0][1].item<float>();
  });
  CHECK(got == std::vector<float>{2, 2});
}

TEST_CASE("funcol's local ops around the collective are upstream's, on a fake world of 8") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  DebugMode mode(no_outputs());
  {
    DebugMode::Guard guard(mode);
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // where a DTensor's handler runs
    const Tensor x = ones({1, 96, 8});
    const Tensor rs = funcol::reduce_scatter_tensor(x, "sum", 2, {mesh, 0});
    CHECK(rs.sizes() == IntArrayRef({1, 96, 2}));
    const Tensor g = funcol::all_gather_tensor(ones({1, 2, 16}), 1, {mesh, 1});
    CHECK(g.sizes() == IntArrayRef({1, 4, 16}));
  }
  const bool chunked = chunk_dispatches(mode.debug_string());
  const std::string chunk_rs = chunked ? "    aten::chunk(t: f32[1, 96, 8], 4, 2)\n"
                                                  : "    aten::split.Tensor(t: f32[1, 96, 8], 2, 2)\n";
  const std::string chunk_ag = chunked ? "    aten::chunk(t: f32[2, 2, 16], 2)\n"
                                                  : "    aten::split.Tensor(t: f32[2, 2, 16], 1)\n";
  CHECK(mode.debug_string() ==
        "    aten::ones([1, 96, 8])\n" + chunk_rs +
            "    aten::cat(['t: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]'])\n"
            "    _c10d_functional::reduce_scatter_tensor(t: f32[4, 96, 2], sum, 4, 2)\n"
            "    aten::ones([1, 2, 16])\n"
            "    _c10d_functional::all_gather_into_tensor(t: f32[1, 2, 16], 2, 3)\n"
            "    _c10d_functional::wait_tensor(t: f32[2, 2, 16])\n" +
            chunk_ag + "    aten::cat(['t: f32[1, 2, 16]', 't: f32[1, 2, 16]'], 1)");
}

TEST_CASE("funcol errors name the function, the dimension and the sizes") {
  FakeWorld world(0, 4);
  CHECK_THROWS_WITH_AS(funcol::reduce_scatter_tensor(ones({2, 6}), "sum", 0, "0"),
                       "input dimension 0 (2 must be a multiple of group_size 4)", Error);
  CHECK_THROWS_WITH_AS(funcol::all_gather_tensor(ones({2, 3}).t(), 0, "0"),
                       "all_gather_tensor: the input must be contiguous, got a tensor of shape [3, 2] and strides [1, 3]",
                       Error);
  CHECK_THROWS_WITH_AS(funcol::all_gather_tensor(ones({2, 3}), 2, "0"),
                       "all_gather_tensor: gather_dim 2 is out of range for a tensor of shape [2, 3]", Error);
  CHECK_THROWS_WITH_AS(funcol::all_to_all_single(ones({4}), {1, 1, 1, 1}, {}, "0"),
                       "output_split_sizes and input_split_sizes must either be specified together or both set to None",
                       Error);
}

TEST_CASE("an AsyncCollectiveTensor waits at its first non-view op, unseen; views stay wrapped; wait() is seen") {
  FakeWorld world(0, 4);
  DebugMode mode(no_outputs());
  DebugMode::Guard guard(mode);
  const Tensor act = funcol::all_reduce(ones({4, 6}), "sum", "0");
  const AsyncCollectiveTensor* payload = AsyncCollectiveTensor::of(act);
  REQUIRE(payload != nullptr);
  CHECK(!payload->completed());
  const Tensor view = act.narrow(0, 1, 2).t();  // slice and t: views, no wait
  REQUIRE(AsyncCollectiveTensor::of(view) != nullptr);
  CHECK(view.sizes() == IntArrayRef({6, 2}));
  CHECK(!payload->completed());
  CHECK(!AsyncCollectiveTensor::of(view)->completed());
  const Tensor sum = act + 1.0;  // waits once, returns a plain tensor
  CHECK(payload->completed());
  CHECK(AsyncCollectiveTensor::of(sum) == nullptr);
  const Tensor waited = AsyncCollectiveTensor::wait(act);
  CHECK(AsyncCollectiveTensor::of(waited) == nullptr);
  // DebugMode records plain-tensor ops only: the ops on the wrapper and the handler's own wait are
  // not in the log; the program's wait() is.
  CHECK(mode.debug_string() ==
        "    aten::ones([4, 6])\n"
        "    _c10d_functional::all_reduce(t: f32[4, 6], sum, 0)\n"
        "    _c10d_functional::wait_tensor(t: f32[4, 6])");
  CHECK(sum.equal(full({4, 6}, 2.0)));  // the fake group's all_reduce leaves the input
  CHECK_THROWS_WITH_AS(AsyncCollectiveTensor::wait(ones({2})), "wait() is a method of AsyncCollectiveTensor, got a plain tensor",
                       Error);
}

TEST_CASE("under FakeTensorMode a collective's fake output is waited for at once, not wrapped") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  tracer::FakeTensorMode fake;
  const ModeGuard guard(fake);
  const Tensor x = ones({2, 8});
  const Tensor reduced = funcol::all_reduce(x, "sum", {mesh, 0});
  CHECK(AsyncCollectiveTensor::of(reduced) == nullptr);
  CHECK(tracer::FakeTensor::is_fake(reduced));
  const Tensor gathered = funcol::all_gather_tensor(x, 1, {mesh, 1});
  CHECK(tracer::FakeTensor::is_fake(gathered));
  CHECK(gathered.sizes() == IntArrayRef({2, 16}));
  const Tensor scattered = funcol::reduce_scatter_tensor(x, "avg", 1, {mesh, 0});
  CHECK(scattered.sizes() == IntArrayRef({2, 2}));
}

TEST_CASE("an AsyncCollectiveTensor prints its waited value and flattens to its inner tensor") {
  FakeWorld world(0, 2);
  const Tensor act = funcol::all_reduce(full({2}, 3.0), "sum", "0");
  const AsyncCollectiveTensor* payload = AsyncCollectiveTensor::of(act);
  REQUIRE(payload != nullptr);
  const FlattenedTensor flat = payload->flatten(act);
  CHECK(flat.names == std::vector<std::string>{"elem"});
  const Tensor again = payload->unflatten(flat, act.sizes(), act.strides());
  CHECK(AsyncCollectiveTensor::of(again) != nullptr);
  CHECK(payload->repr(act).rfind("AsyncCollectiveTensor(", 0) == 0);
  CHECK(payload->completed());
  CHECK_THROWS_WITH_AS(AsyncCollectiveTensor::wrap(act),
                       "AsyncCollectiveTensor wraps a defined tensor that is not an AsyncCollectiveTensor itself", Error);
}

}  // namespace test_funcol
