// tests/distributed/test_sharding_propagation_threads.cpp: thread ranks share the process's
// propagator but not its cache (Note [The sharding cache is per thread]): each rank of a fake world
// gets the local shape of its own shard for the same view call.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/util/error.h"
#include "distributed/fake_process_group.h"
#include "distributed/sharding_propagation.h"
#include "ops/op_table.h"

namespace test_sharding_propagation_threads {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TEST_CASE("each thread rank caches its own sharding, with its own local view shape" * doctest::test_suite("threads")) {
  constexpr int kRanks = 4;
  ops::op("aten::view");  // the op table, before the threads race to it
  std::vector<std::vector<std::int64_t>> local(kRanks);
  std::vector<ShardingPropagator::CacheStats> stats(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        FakeWorld world(r, kRanks);
        const DeviceMesh mesh = init_device_mesh({kRanks});
        const std::vector<std::int64_t> to{10, 2, 2};
        // f32[10, 4] rows sharded 3, 3, 3, 1 (Note [Uneven shards follow torch.chunk]) viewed as [10, 2, 2].
        const OpSchema view{ops::op("aten::view"),
                            {DTensorSpec{mesh, {Shard{0}}, TensorMeta{{10, 4}, {4, 1}, ScalarType::Float32}}, IValue(IntArrayRef(to))}};
        for (int i = 0; i < 3; ++i) {
          const IntArrayRef shape = sharding_propagator().propagate(view).redistribute_schema.value().value(1).to_int_list();
          local[static_cast<std::size_t>(r)].assign(shape.begin(), shape.end());
        }
        stats[static_cast<std::size_t>(r)] = sharding_propagator().cache_stats();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    CAPTURE(r);
    CHECK(errors[static_cast<std::size_t>(r)] == "");
    CHECK(local[static_cast<std::size_t>(r)] == std::vector<std::int64_t>{r < 3 ? 3 : 1, 2, 2});
    CHECK(stats[static_cast<std::size_t>(r)].misses == 1);
    CHECK(stats[static_cast<std::size_t>(r)].hits == 2);
  }
}

}  // namespace test_sharding_propagation_threads
