// tests/distributed/test_redistribute.cpp: redistribute_local_tensor between every pair of
// placements (Shard(0), Shard(1), Replicate, Partial sum, and some Partial avg and max) on a (2, 2)
// mesh and a 1-D mesh of 4 thread ranks, for even and uneven global shapes (empty shards included):
// each rank's local tensor is cut from a known global tensor (Partial: split into terms that reduce
// to it), redistributed, and compared with the target's shard of the global tensor; a Partial target
// is checked through its full tensor (redistributed to Replicate). One spawn runs every pair.
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/redistribute.h"
#include "distributed/shard_layout.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"
#include "tests/distributed/redistribute_cases.h"

namespace test_redistribute {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;
using namespace strata::testing;

namespace {
using Sizes = std::vector<std::int64_t>;

const Placement kS0 = Shard{0};
const Placement kS1 = Shard{1};
const Placement kR = Replicate{};
const Placement kP = Partial{};
const Placement kAvg = Partial{ReduceOp::Avg};
const Placement kMax = Partial{ReduceOp::Max};

std::vector<Placements> mesh_2d_lists() {
  std::vector<Placements> lists;
  for (const Placement& a : {kS0, kS1, kR, kP})
    for (const Placement& b : {kS0, kS1, kR, kP}) lists.push_back({a, b});
  for (const Placements& ps : std::vector<Placements>{
           {kAvg, kS1}, {kS0, kAvg}, {kAvg, kAvg}, {kMax, kR}, {kR, kMax}, {kS1, kMax}})
    lists.push_back(ps);
  return lists;
}

std::vector<Placements> mesh_1d_lists() { return {{kS0}, {kS1}, {kR}, {kP}, {kAvg}, {kMax}}; }

struct Runner {
  int rank;
  std::mutex& mutex;
  std::vector<std::string>& failures;
  int count = 0;

  void fail(const std::string& what) {
    const std::lock_guard<std::mutex> lock(mutex);
    failures.push_back("rank " + std::to_string(rank) + ": " + what);
  }

  // Every supported pair of `lists` on `mesh` for a global tensor of `shape`.
  void all_pairs(const DeviceMesh& mesh, const std::vector<Placements>& lists, const Sizes& shape) {
    const Tensor global = global_tensor(shape);
    for (const Placements& src : lists) {
      for (const Placements& dst : lists) {
        if (!supported(src, dst)) continue;
        ++count;
        const std::string label = mesh.short_str() + " " + to_string(src, PartialStyle::WithReduceOp) + " -> " +
                                  to_string(dst, PartialStyle::WithReduceOp) + " of " + shape_str(shape);
        try {
          const std::string error = redistribution_error(mesh, global, src, dst);
          if (!error.empty()) fail(label + ": " + error);
        } catch (const Error& e) {
          fail(label + ": " + e.what());
        }
      }
    }
  }
};
}  // namespace

TEST_CASE("every pair of placements on a (2, 2) mesh and a 1-D mesh of 4, even and uneven shapes" *
          doctest::test_suite("threads")) {
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<int> counts(4, 0);
  spawn(4, [&](int rank) {
    const DeviceMesh square = init_device_mesh({2, 2});
    const DeviceMesh line = init_device_mesh({4});
    Runner run{rank, mutex, failures};
    for (const Sizes& shape : {Sizes{4, 6}, Sizes{5, 3}, Sizes{3, 5}}) run.all_pairs(square, mesh_2d_lists(), shape);
    for (const Sizes& shape : {Sizes{8, 4}, Sizes{5, 7}}) run.all_pairs(line, mesh_1d_lists(), shape);
    counts[static_cast<std::size_t>(rank)] = run.count;
  });
  // The supported pairs of 22 lists on the square for 3 shapes and of 6 on the line for 2: on every rank.
  CHECK(counts == std::vector<int>(4, 924));
  CHECK(failures.empty());
  for (std::size_t i = 0; i < failures.size() && i < 40; ++i) MESSAGE(failures[i]);
}

}  // namespace test_redistribute
