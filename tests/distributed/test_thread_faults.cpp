// tests/distributed/test_thread_faults.cpp: the thread backend's faults found by issue 28's probe:
// collectives nobody waits for (done by the end of spawn), a collective a rank never issued (the job
// fails at once), waits in another order than the issues, a thread that cannot start, an infinite
// timeout, split sizes and int64 reductions that overflow. The cases that could hang use short
// timeouts (kShort), so a regression fails in half a second instead of waiting 30 minutes; the ones
// that must fail at once keep the default timeout, and a hang would show.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "distributed/thread_world.h"
#include "ops/functions.h"
#include "tests/distributed/collective_inputs.h"
#include "tests/test_helpers.h"

namespace test_thread_faults {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {

using Clock = std::chrono::steady_clock;
const SpawnOptions kShort{std::chrono::milliseconds(500)};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The message spawn raises, or "" when it returns normally.
std::string spawn_error(int world, const std::function<void(int)>& fn, SpawnOptions options = kShort) {
  try {
    spawn(world, fn, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Tensor int64_tensor(const std::vector<std::int64_t>& values) {
  const Tensor t = tensor(values);
  REQUIRE(t.dtype() == ScalarType::Int64);
  return t;
}

}  // namespace

TEST_CASE("a collective no rank waits for is done by the end of spawn; a later wait_tensor returns it" * doctest::test_suite("threads")) {
  for (const int world : {1, 2, 3}) {
    INFO("world ", world);
    std::vector<Tensor> sums(static_cast<std::size_t>(world)), gathered(static_cast<std::size_t>(world));
    spawn(world, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      sums[r] = all_reduce(testing::input_of(rank, {5, 3}), "sum", "0");  // never waited for
      gathered[r] = all_gather_into_tensor(testing::input_of(rank, {2}), world, "0");
    }, kShort);
    std::vector<Tensor> parts;
    for (int r = 0; r < world; ++r) parts.push_back(testing::input_of(r, {2}));
    for (int r = 0; r < world; ++r) {
      const auto k = static_cast<std::size_t>(r);
      CHECK(wait_tensor(sums[k]).to_vector<double>() == testing::reduced("sum", world, 15));
      CHECK(testing::same(wait_tensor(gathered[k]), cat(parts, 0)));
    }
  }
}

TEST_CASE("a rank that never waits does not block the ranks that do" * doctest::test_suite("threads")) {
  std::vector<Tensor> got(3);
  CHECK(spawn_error(3, [&](int rank) {
          const Tensor out = all_reduce(full({4}, static_cast<double>(rank + 1)), "sum", "0");
          got[static_cast<std::size_t>(rank)] = rank == 1 ? out : wait_tensor(out);  // rank 1 returns at once
        }) == "");
  for (const Tensor& g : got) CHECK(testing::same(g, full({4}, 6.0)));
}

TEST_CASE("waits in another order than the issues complete" * doctest::test_suite("threads")) {
  for (const int world : {2, 3}) {
    INFO("world ", world);
    std::vector<std::pair<Tensor, Tensor>> got(static_cast<std::size_t>(world));
    CHECK(spawn_error(world, [&](int rank) {
            const Tensor a = all_reduce(full({3}, static_cast<double>(rank + 1)), "sum", "0");
            const Tensor b = all_reduce(full({3}, 10.0 * (rank + 1)), "max", "0");
            if (rank % 2 == 0) {
              got[static_cast<std::size_t>(rank)] = {wait_tensor(a), wait_tensor(b)};
            } else {
              const Tensor b_done = wait_tensor(b);
              got[static_cast<std::size_t>(rank)] = {wait_tensor(a), b_done};
            }
          }) == "");
    for (const auto& [a, b] : got) {
      CHECK(testing::same(a, full({3}, world * (world + 1) / 2.0)));
      CHECK(testing::same(b, full({3}, 10.0 * world)));
    }
  }
}

TEST_CASE("a collective some rank issued and another never did fails the job at once" * doctest::test_suite("threads")) {
  const auto start = Clock::now();
  // Nobody waits: the job fails when the last rank returns, naming the collective and the rank missing.
  CHECK(spawn_error(2, [](int rank) {
          if (rank == 0) (void)all_reduce(ones({2}), "sum", "0");
        }, SpawnOptions{}) == "spawn: all_reduce (collective #0 on group '0'): rank 1 returned without joining it");
  // The third collective of rank 0 in a group split from the world.
  CHECK(spawn_error(2, [](int rank) {
          const std::string group = split_group({{0, 1}});
          (void)wait_tensor(all_reduce(ones({2}), "sum", group));
          (void)broadcast(ones({2}), 0, group);
          if (rank == 0) (void)all_gather_into_tensor(ones({2}), 2, group);
        }, SpawnOptions{}) == "spawn: all_gather_into_tensor (collective #2 on group '1'): rank 1 returned without joining it");
  // Ranks that disagree on a collective none of them waited for.
  CHECK(spawn_error(2, [](int rank) { (void)all_reduce(ones({rank + 2}), "sum", "0"); }, SpawnOptions{}) ==
        "spawn: all_reduce (collective #0): rank 0's tensor has sizes [2] but rank 1's has [3]");
  CHECK(seconds_since(start) < 10.0);  // not after the 30-minute default timeout
}

TEST_CASE("a thread that cannot start: spawn joins the started ranks and raises an error" * doctest::test_suite("threads")) {
  std::atomic<int> ran{0};
  std::mutex m;
  std::vector<std::string> waits;
  distributed::detail::fail_thread_start_for_testing(2);
  const std::string error = spawn_error(4, [&](int) {
    ++ran;
    try {
      wait_tensor(all_reduce(ones({2}), "sum", "0"));  // ranks 2 and 3 never come
    } catch (const Error& e) {
      const std::lock_guard<std::mutex> lock(m);
      waits.push_back(e.what());
    }
  }, SpawnOptions{});
  distributed::detail::fail_thread_start_for_testing(-1);
  CHECK(error == "spawn: could not start the thread of rank 2 of 4: Resource temporarily unavailable");
  CHECK(ran == 2);
  REQUIRE(waits.size() == 2);
  for (const std::string& w : waits)
    CHECK(w == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '0') cannot complete: spawn could "
               "not start the thread of rank 2 of 4: Resource temporarily unavailable");
}

TEST_CASE("a timeout of milliseconds::max() never expires" * doctest::test_suite("threads")) {
  std::vector<Tensor> got(2);
  CHECK(spawn_error(2, [&](int rank) {
          if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // rank 0 waits for rank 1
          got[static_cast<std::size_t>(rank)] = wait_tensor(all_reduce(full({2}, 1.0), "sum", "0"));
        }, SpawnOptions{std::chrono::milliseconds::max()}) == "");
  for (const Tensor& g : got) CHECK(testing::same(g, full({2}, 2.0)));
}

TEST_CASE("all_to_all_single split sizes that overflow int64 get a clear error" * doctest::test_suite("threads")) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK(spawn_error(1, [&](int) { (void)all_to_all_single(ones({2}), {big, 1}, {}, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_to_all_single] output_split_sizes [9223372036854775807, 1] add "
        "up to more than an int64 holds");
  CHECK(spawn_error(1, [&](int) { (void)all_to_all_single(ones({2}), {}, {big, big}, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_to_all_single] input_split_sizes [9223372036854775807, "
        "9223372036854775807] add up to more than an int64 holds");
}

TEST_CASE("an all_gather whose output's first dimension overflows int64 gets a clear error" * doctest::test_suite("threads")) {
  const std::string error = spawn_error(2, [](int) { (void)all_gather_into_tensor(empty({std::int64_t{1} << 62, 0}), 2, "0"); });
  const std::string tail = " failed: [_c10d_functional::all_gather_into_tensor] the input's first dimension "
                           "(4611686018427387904) times group_size (2) overflows int64";
  CHECK(error.size() > tail.size());
  CHECK(error.substr(error.size() - std::min(error.size(), tail.size())) == tail);
}

TEST_CASE("int64 all_reduce sum and product wrap around as two's complement, as Gloo's and MPI's do" * doctest::test_suite("threads")) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max(), min = std::numeric_limits<std::int64_t>::min();
  std::vector<std::vector<std::int64_t>> sum(2), product(2);
  spawn(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    const Tensor mine = rank == 0 ? int64_tensor({max, min, std::int64_t{1} << 62}) : int64_tensor({1, -1, 4});
    sum[r] = wait_tensor(all_reduce(mine, "sum", "0")).to_vector<std::int64_t>();
    product[r] = wait_tensor(all_reduce(mine, "product", "0")).to_vector<std::int64_t>();
  }, kShort);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(sum[r] == std::vector<std::int64_t>{min, max, (std::int64_t{1} << 62) + 4});
    CHECK(product[r] == std::vector<std::int64_t>{max, min, 0});  // min * -1 wraps to min; 2^62 * 4 to 0
  }
}

TEST_CASE("all_to_all_single ranks whose rows differ in size get the same clear error" * doctest::test_suite("threads")) {
  std::mutex m;
  std::vector<std::string> errors;
  CHECK(spawn_error(2, [&](int rank) {
          try {
            (void)wait_tensor(all_to_all_single(ones({2, rank + 1}), {}, {}, "0"));
          } catch (const Error& e) {
            const std::lock_guard<std::mutex> lock(m);
            errors.push_back(e.what());
          }
        }) == "");
  REQUIRE(errors.size() == 2);
  for (const std::string& e : errors)
    CHECK(e == "[_c10d_functional::wait_tensor] all_to_all_single (collective #0): rank 0's tensor has sizes [2, 1] "
               "but rank 1's has [2, 2] (all but the first must match)");
}

TEST_CASE("a group split after a rank returned knows that rank is gone" * doctest::test_suite("threads")) {
  std::string waited;
  const std::string error = spawn_error(2, [&](int rank) {
    if (rank == 1) return;  // before rank 0 makes the group
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string group = split_group({{0, 1}});
    try {
      wait_tensor(all_reduce(ones({2}), "sum", group));
    } catch (const Error& e) {
      waited = e.what();
    }
  });
  CHECK(waited == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '1'): rank 1 returned without joining it");
  CHECK(error == "spawn: all_reduce (collective #0 on group '1'): rank 1 returned without joining it");
}

}  // namespace test_thread_faults
