// tests/distributed/test_shard_layout.cpp: a rank's shard of an unevenly sharded dimension, by
// upstream's rules: _local_shard_size_and_offset, _split_tensor's padding (torch.chunk's pieces,
// from scripts/reference/device_mesh_reference.py) and compute_local_shape_and_global_offset.
#include <doctest/doctest.h>

#include <vector>

#include "core/util/error.h"
#include "distributed/shard_layout.h"

namespace test_shard_layout {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {
using Sizes = std::vector<std::int64_t>;
}

TEST_CASE("torch.chunk's pieces, padded to ceil(n / k), as _split_tensor cuts them") {
  struct Case {
    std::int64_t n, k;
    Sizes sizes;  // torch.chunk(arange(n), k) with empty pieces appended (PyTorch)
  };
  const std::vector<Case> cases = {{0, 3, {0, 0, 0}},       {1, 4, {1, 0, 0, 0}},       {4, 3, {2, 2, 0}},
                                   {5, 4, {2, 2, 1, 0}},    {6, 4, {2, 2, 2, 0}},       {7, 4, {2, 2, 2, 1}},
                                   {9, 6, {2, 2, 2, 2, 1, 0}}, {10, 4, {3, 3, 3, 1}},   {12, 5, {3, 3, 3, 3, 0}},
                                   {13, 6, {3, 3, 3, 3, 1, 0}}, {8, 4, {2, 2, 2, 2}},    {3, 1, {3}}};
  for (const Case& c : cases) {
    CAPTURE(c.n);
    CAPTURE(c.k);
    const ShardSplit split = split_with_padding(c.n, c.k);
    CHECK(split.sizes == c.sizes);
    CHECK(split.full_chunk_size == (c.n + c.k - 1) / c.k);
    for (std::size_t i = 0; i < c.sizes.size(); ++i) CHECK(split.pads[i] == split.full_chunk_size - c.sizes[i]);
  }
  CHECK(split_with_padding(5, 4).pads == Sizes{0, 0, 1, 2});
}

TEST_CASE("_local_shard_size_and_offset: even and uneven shards, and the empty ones past the end") {
  CHECK(local_shard_size_and_offset(8, 4, 3) == ShardSlice{2, 6});
  CHECK(local_shard_size_and_offset(5, 4, 0) == ShardSlice{2, 0});
  CHECK(local_shard_size_and_offset(5, 4, 1) == ShardSlice{2, 2});
  CHECK(local_shard_size_and_offset(5, 4, 2) == ShardSlice{1, 4});
  CHECK(local_shard_size_and_offset(5, 4, 3) == ShardSlice{0, 5});   // starts at 6 > 5: offset n
  CHECK(local_shard_size_and_offset(6, 4, 3) == ShardSlice{0, 6});   // starts at 6 == n
  CHECK(local_shard_size_and_offset(12, 5, 4) == ShardSlice{0, 12});
  CHECK(local_shard_size_and_offset(1, 4, 2) == ShardSlice{0, 1});
  CHECK(local_shard_size_and_offset(0, 3, 2) == ShardSlice{0, 0});
  // It agrees with the padded split for every size and chunk count, and the shards tile the dimension.
  for (std::int64_t n = 0; n <= 13; ++n)
    for (std::int64_t k = 1; k <= 6; ++k) {
      const ShardSplit split = split_with_padding(n, k);
      std::int64_t next = 0;
      for (std::int64_t r = 0; r < k; ++r) {
        const ShardSlice s = local_shard_size_and_offset(n, k, r);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(r);
        CHECK(s.size == split.sizes[static_cast<std::size_t>(r)]);
        CHECK(s.offset == next);  // an empty shard lies at the end, n
        next += s.size;
      }
      CHECK(next == n);
    }
  CHECK_THROWS_WITH_AS(local_shard_size_and_offset(4, 0, 0),
                       "local_shard_size_and_offset: num_chunks must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(local_shard_size_and_offset(4, 2, 2), "local_shard_size_and_offset: rank 2 is not in [0, 2)",
                       Error);
  CHECK_THROWS_WITH_AS(split_with_padding(-1, 2), "split_with_padding: the size must not be negative, got -1", Error);
}

TEST_CASE("compute_local_shape_and_global_offset on 1-D and 2-D meshes, sharding a dimension twice") {
  const auto at = [](Sizes global, Sizes mesh, Sizes coordinate, Placements ps) {
    return compute_local_shape_and_global_offset(global, mesh, coordinate, ps);
  };
  LocalShape l = at({8, 5}, {2, 2}, {1, 1}, {Shard{0}, Shard{1}});
  CHECK(l.shape == Sizes{4, 2});
  CHECK(l.global_offset == Sizes{4, 3});
  l = at({8, 5}, {2, 2}, {1, 0}, {Replicate{}, Shard{1}});
  CHECK(l.shape == Sizes{8, 3});
  CHECK(l.global_offset == Sizes{0, 0});
  l = at({8, 5}, {2, 2}, {1, 1}, {Partial{}, Replicate{}});
  CHECK(l.shape == Sizes{8, 5});
  CHECK(l.global_offset == Sizes{0, 0});
  // [S(0), S(0)]: the second mesh dimension cuts the first one's shard; offsets add up.
  l = at({7}, {2, 2}, {1, 0}, {Shard{0}, Shard{0}});
  CHECK(l.shape == Sizes{2});  // 7 -> 4 | 3; rank 1's 3 -> 2 | 1
  CHECK(l.global_offset == Sizes{4});
  l = at({7}, {2, 2}, {1, 1}, {Shard{0}, Shard{0}});
  CHECK(l.shape == Sizes{1});
  CHECK(l.global_offset == Sizes{6});
  l = at({7}, {2, 2}, {0, 1}, {Shard{0}, Shard{0}});
  CHECK(l.shape == Sizes{2});
  CHECK(l.global_offset == Sizes{2});
  // An empty shard's offset is the dimension's global size.
  l = at({3}, {4}, {3}, {Shard{0}});
  CHECK(l.shape == Sizes{0});
  CHECK(l.global_offset == Sizes{3});
  l = at({1}, {2, 2}, {1, 0}, {Shard{0}, Shard{0}});
  CHECK(l.shape == Sizes{0});
  CHECK(l.global_offset == Sizes{1});
  // A rank outside the mesh.
  l = compute_local_shape_and_global_offset({4, 4}, {2}, std::nullopt, {Shard{0}});
  CHECK(l.shape == Sizes{0});
  CHECK(l.global_offset.empty());
  CHECK_THROWS_WITH_AS(at({4}, {2}, {0}, {Shard{1}}), "Sharding dim 1 greater than tensor ndim 1", Error);
  CHECK_THROWS_AS(at({4}, {2, 2}, {0, 0}, {Shard{0}}), Error);
}

}  // namespace test_shard_layout
