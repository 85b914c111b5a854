// tests/distributed/test_device_mesh.cpp: device meshes of 1, 2 and 3 dimensions: each rank's
// coordinate, its group per mesh dimension named as PyTorch names them (the tables come from
// scripts/reference/device_mesh_reference.py), local ranks, sizes, DM(4, 2), names and errors; on the
// fake group (any rank of a large world, in one process) and on thread ranks, where collectives on
// each dimension's group reach exactly the ranks along it.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <string>

#include "core/util/error.h"
#include "distributed/device_mesh.h"
#include "distributed/fake_process_group.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

namespace test_device_mesh {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {
using Sizes = std::vector<std::int64_t>;

// What PyTorch gives rank r of a mesh: its coordinate and each dimension's group name and members.
struct Expected {
  Sizes coordinate;
  std::vector<std::string> names;
  std::vector<std::vector<int>> members;
};

// Checks `mesh` as built on rank `rank` against `e` (members: the group's size and this rank's place).
void check_mesh(const DeviceMesh& mesh, int rank, const Expected& e) {
  CAPTURE(rank);
  REQUIRE(mesh.get_coordinate().has_value());
  CHECK(*mesh.get_coordinate() == e.coordinate);
  for (int d = 0; d < mesh.ndim(); ++d) {
    CAPTURE(d);
    const std::vector<int>& members = e.members[static_cast<std::size_t>(d)];
    CHECK(mesh.group_name(d) == e.names[static_cast<std::size_t>(d)]);
    CHECK(mesh.get_group(d).size() == static_cast<int>(members.size()));
    const int local = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
    CHECK(mesh.get_local_rank(d) == local);
    CHECK(mesh.get_local_rank(d) == e.coordinate[static_cast<std::size_t>(d)]);
  }
}

// PyTorch's (4, 2) mesh over a world of 8 (the DTensor DebugMode seed: rank 1's groups are "2" and "3").
const std::vector<Expected> kMesh4x2 = {
    {{0, 0}, {"1", "3"}, {{0, 2, 4, 6}, {0, 1}}}, {{0, 1}, {"2", "3"}, {{1, 3, 5, 7}, {0, 1}}},
    {{1, 0}, {"1", "4"}, {{0, 2, 4, 6}, {2, 3}}}, {{1, 1}, {"2", "4"}, {{1, 3, 5, 7}, {2, 3}}},
    {{2, 0}, {"1", "5"}, {{0, 2, 4, 6}, {4, 5}}}, {{2, 1}, {"2", "5"}, {{1, 3, 5, 7}, {4, 5}}},
    {{3, 0}, {"1", "6"}, {{0, 2, 4, 6}, {6, 7}}}, {{3, 1}, {"2", "6"}, {{1, 3, 5, 7}, {6, 7}}}};

// (2, 2, 2) over 8: the first dimension's rows come in the swapped view's order, [0, 4], [2, 6], [1, 5], [3, 7].
const std::vector<Expected> kMesh2x2x2 = {
    {{0, 0, 0}, {"1", "5", "9"}, {{0, 4}, {0, 2}, {0, 1}}},   {{0, 0, 1}, {"3", "6", "9"}, {{1, 5}, {1, 3}, {0, 1}}},
    {{0, 1, 0}, {"2", "5", "10"}, {{2, 6}, {0, 2}, {2, 3}}},  {{0, 1, 1}, {"4", "6", "10"}, {{3, 7}, {1, 3}, {2, 3}}},
    {{1, 0, 0}, {"1", "7", "11"}, {{0, 4}, {4, 6}, {4, 5}}},  {{1, 0, 1}, {"3", "8", "11"}, {{1, 5}, {5, 7}, {4, 5}}},
    {{1, 1, 0}, {"2", "7", "12"}, {{2, 6}, {4, 6}, {6, 7}}},  {{1, 1, 1}, {"4", "8", "12"}, {{3, 7}, {5, 7}, {6, 7}}}};

// (2, 3, 2) over 12: ranks 1, 6 and 11.
const std::vector<std::pair<int, Expected>> kMesh2x3x2 = {
    {1, {{0, 0, 1}, {"4", "8", "11"}, {{1, 7}, {1, 3, 5}, {0, 1}}}},
    {6, {{1, 0, 0}, {"1", "9", "14"}, {{0, 6}, {6, 8, 10}, {6, 7}}}},
    {11, {{1, 2, 1}, {"6", "10", "16"}, {{5, 11}, {7, 9, 11}, {10, 11}}}}};

}  // namespace

TEST_CASE("a (4, 2) mesh over a fake world of 8, as each rank: PyTorch's group names and coordinates") {
  for (int rank = 0; rank < 8; ++rank) {
    FakeWorld world(rank, 8);
    const DeviceMesh mesh = init_device_mesh({4, 2});
    check_mesh(mesh, rank, kMesh4x2[static_cast<std::size_t>(rank)]);
    CHECK(mesh.short_str() == "DM(4, 2)");
    CHECK(mesh.ndim() == 2);
    CHECK(mesh.size() == 8);
    CHECK(mesh.size(0) == 4);
    CHECK(mesh.size(-1) == 2);
    CHECK(mesh.get_rank() == rank);
  }
}

TEST_CASE("3-D meshes over fake worlds: (2, 2, 2) as every rank, (2, 3, 2) as three") {
  for (int rank = 0; rank < 8; ++rank) {
    FakeWorld world(rank, 8);
    const DeviceMesh mesh = init_device_mesh({2, 2, 2});
    check_mesh(mesh, rank, kMesh2x2x2[static_cast<std::size_t>(rank)]);
    CHECK(mesh.short_str() == "DM(2, 2, 2)");
  }
  for (const auto& entry : kMesh2x3x2) {
    FakeWorld world(entry.first, 12);
    check_mesh(init_device_mesh({2, 3, 2}), entry.first, entry.second);
  }
}

TEST_CASE("1-D meshes: the whole world is the world group; a smaller mesh makes one, and leaves other ranks out") {
  {
    FakeWorld world(3, 8);
    const DeviceMesh mesh = init_device_mesh({8});
    CHECK(mesh.group_name(0) == "0");
    CHECK(mesh.get_local_rank() == 3);
    CHECK(*mesh.get_coordinate() == Sizes{3});
    CHECK(mesh.short_str() == "DM(8)");
    CHECK(split_group({{3}}) == "1");  // the mesh made no group
  }
  {
    FakeWorld world(2, 8);
    const DeviceMesh mesh = init_device_mesh({4});
    CHECK(mesh.group_name(0) == "1");
    CHECK(mesh.get_local_rank() == 2);
    CHECK(mesh.get_group(0).size() == 4);
  }
  {
    FakeWorld world(5, 8);
    const DeviceMesh mesh = init_device_mesh({4});
    CHECK_FALSE(mesh.get_coordinate().has_value());
    CHECK_THROWS_WITH_AS(mesh.get_local_rank(), "DeviceMesh: rank 5 is not in the mesh DM(4), so it has no group for "
                         "mesh dimension 0", Error);
    CHECK(split_group({{5}}) == "2");  // rank 5 still counted the mesh's group
  }
}

TEST_CASE("rank 5 of a (32, 32) mesh in one process, at once") {
  const auto start = std::chrono::steady_clock::now();
  FakeWorld world(5, 1024);
  const DeviceMesh mesh = init_device_mesh({32, 32}, {"dp", "tp"});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("a (32, 32) mesh as rank 5 in ", ms, " ms");
  CHECK(*mesh.get_coordinate() == Sizes{0, 5});
  CHECK(mesh.group_name(0) == "6");   // column 5 of 32 columns: "1" .. "32"
  CHECK(mesh.group_name(1) == "33");  // row 0 of 32 rows: "33" .. "64"
  CHECK(mesh.get_local_rank(mesh.dim_index("dp")) == 0);
  CHECK(mesh.get_local_rank(mesh.dim_index("tp")) == 5);
  CHECK(mesh.get_group(0).size() == 32);
  CHECK(split_group({{5}}) == "65");
  CHECK(ms < 1000);
}

TEST_CASE("a mesh of given ranks, copies and equality") {
  FakeWorld world(1, 4);
  const DeviceMesh mesh({2, 2}, {3, 1, 2, 0});  // rows [3, 1], [2, 0]; columns [3, 2], [1, 0]
  CHECK(*mesh.get_coordinate() == Sizes{0, 1});
  CHECK(mesh.group_name(0) == "2");
  CHECK(mesh.get_local_rank(0) == 0);
  CHECK(mesh.group_name(1) == "3");
  CHECK(mesh.get_local_rank(1) == 1);
  CHECK(mesh.ranks() == std::vector<int>{3, 1, 2, 0});
  const DeviceMesh copy = mesh;
  CHECK(copy == mesh);
  CHECK(copy.group_name(1) == "3");
  CHECK(DeviceMesh({2, 2}, {3, 1, 2, 0}) == mesh);
  CHECK(std::hash<DeviceMesh>()(DeviceMesh({2, 2}, {3, 1, 2, 0})) == mesh.hash());
  CHECK(DeviceMesh({2, 2}).hash() != mesh.hash());
  CHECK(DeviceMesh({4}, {3, 1, 2, 0}).hash() != mesh.hash());
  CHECK(DeviceMesh({2, 2}) != mesh);
  CHECK(DeviceMesh({4}, {3, 1, 2, 0}) != mesh);
}

TEST_CASE("a mesh's errors: sizes, ranks, dimension names, a local rank without a dimension") {
  FakeWorld world(0, 8);
  CHECK_THROWS_WITH_AS(init_device_mesh({4, 4}), "Mesh should not be bigger than default world size 8, but found a "
                       "mesh of shape [4, 4] (16 ranks)!", Error);
  CHECK_THROWS_WITH_AS(init_device_mesh({1LL << 40, 1LL << 40}), "Mesh should not be bigger than default world size 8, "
                       "but found a mesh of shape [1099511627776, 1099511627776] (more than 2^63 ranks)!", Error);
  CHECK_THROWS_WITH_AS(init_device_mesh({}), "DeviceMesh: the mesh must have at least one dimension", Error);
  CHECK_THROWS_WITH_AS(init_device_mesh({2, 0}), "DeviceMesh: every mesh dimension must be at least 1, got shape [2, 0]",
                       Error);
  CHECK_THROWS_WITH_AS(DeviceMesh({2}, {0, 0}), "DeviceMesh cannot have duplicate values, but found rank 0 more than "
                       "once in [0, 0]", Error);
  CHECK_THROWS_WITH_AS(DeviceMesh({2}, {0, 8}), "DeviceMesh: rank 8 is not a rank of the world (it has 8 ranks)", Error);
  CHECK_THROWS_WITH_AS(DeviceMesh({2, 2}, {0, 1}), "DeviceMesh: a mesh of shape [2, 2] needs 4 ranks, got 2", Error);
  CHECK_THROWS_WITH_AS(init_device_mesh({2, 4}, {"dp"}), "mesh_shape and mesh_dim_names should have same length! "
                       "Found len(mesh_dim_names): 1 and len(mesh_shape):2.", Error);
  CHECK_THROWS_WITH_AS(init_device_mesh({2, 4}, {"dp", "dp"}), "Each mesh_dim_name must be unique. Found repeated "
                       "mesh_dim_name in mesh_dim_names ('dp', 'dp')", Error);
  CHECK(split_group({{0}}) == "1");  // no failed mesh made a group
  const DeviceMesh mesh = init_device_mesh({2, 4}, {"dp", "tp"});
  CHECK(mesh.dim_names() == std::vector<std::string>{"dp", "tp"});
  CHECK_THROWS_WITH_AS(mesh.dim_index("pp"), "Mesh dimension 'pp' does not exist. Available mesh dimensions are: "
                       "mesh_dim_names=('dp', 'tp')", Error);
  CHECK_THROWS_WITH_AS(mesh.get_local_rank(), "Found the DeviceMesh have 2 dimensions. Optional kwarg `mesh_dim` needs "
                       "to be specified when device_mesh.ndim > 1.", Error);
  CHECK_THROWS_WITH_AS(mesh.size(2), "DeviceMesh: mesh dimension 2 is out of range for a mesh of 2 dimensions", Error);
  destroy_process_groups();
  CHECK_THROWS_WITH_AS(init_device_mesh({2}), "Could not resolve the process group registered under the name 0", Error);
}

TEST_CASE("meshes on 8 thread ranks: each rank's groups are PyTorch's, and reach the ranks along the dimension" *
          doctest::test_suite("threads")) {
  std::mutex mutex;
  std::vector<std::string> failures;
  spawn(8, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({4, 2});
    const DeviceMesh cube = init_device_mesh({2, 2, 2});
    const DeviceMesh line = init_device_mesh({8});
    const auto fail = [&](const std::string& what) {
      const std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("rank " + std::to_string(rank) + ": " + what);
    };
    const auto check_groups = [&](const DeviceMesh& m, const Expected& e, const std::string& label) {
      if (*m.get_coordinate() != e.coordinate) fail(label + " coordinate");
      for (int d = 0; d < m.ndim(); ++d) {
        const std::vector<int>& members = e.members[static_cast<std::size_t>(d)];
        if (m.group_name(d) != e.names[static_cast<std::size_t>(d)]) fail(label + " name of dim " + std::to_string(d));
        // The sum of the world ranks along the dimension, gathered over the dimension's group.
        const Tensor sum = wait_tensor(all_reduce(full({1}, static_cast<double>(rank)), "sum", m.group_name(d)));
        int expected = 0;
        for (int r : members) expected += r;
        if (sum.item<float>() != static_cast<float>(expected)) fail(label + " sum over dim " + std::to_string(d));
        if (m.get_local_rank(d) != e.coordinate[static_cast<std::size_t>(d)]) fail(label + " local rank");
      }
    };
    check_groups(mesh, kMesh4x2[static_cast<std::size_t>(rank)], "(4, 2)");
    // The cube's groups follow the (4, 2) mesh's six: "7" onwards.
    Expected cube_expected = kMesh2x2x2[static_cast<std::size_t>(rank)];
    for (std::string& name : cube_expected.names) name = std::to_string(std::stoi(name) + 6);
    check_groups(cube, cube_expected, "(2, 2, 2)");
    check_groups(line, {{rank}, {"0"}, {{0, 1, 2, 3, 4, 5, 6, 7}}}, "(8)");
  });
  CHECK(failures.empty());
  for (const std::string& f : failures) MESSAGE(f);
}

TEST_CASE("a mesh smaller than the thread world: its ranks share a group, the others have no coordinate" *
          doctest::test_suite("threads")) {
  std::vector<float> sums(4, -1);
  std::vector<int> in_mesh(4, -1);
  spawn(4, [&](int rank) {
    const DeviceMesh mesh({2}, {3, 1});
    const auto r = static_cast<std::size_t>(rank);
    if (!mesh.get_coordinate()) return;
    in_mesh[r] = static_cast<int>((*mesh.get_coordinate())[0]);
    sums[r] = wait_tensor(all_reduce(full({1}, static_cast<double>(rank)), "sum", mesh.group_name(0))).item<float>();
  });
  CHECK(in_mesh == std::vector<int>{-1, 1, -1, 0});
  CHECK(sums == std::vector<float>{-1, 4, -1, 4});
}

}  // namespace test_device_mesh
