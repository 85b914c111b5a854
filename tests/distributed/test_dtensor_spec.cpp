// tests/distributed/test_dtensor_spec.cpp: DTensorSpec as a value: derived facts (dim map, shard
// counts, sums), upstream's equality and hash with and without a tensor meta, its printed form and
// the errors for a spec that cannot be asked.
#include <doctest/doctest.h>

#include <unordered_set>

#include "core/util/error.h"
#include "distributed/dtensor_spec.h"
#include "distributed/fake_process_group.h"

namespace test_dtensor_spec {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TEST_CASE("a spec's dim map, shard counts and sums follow its placements") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  const DTensorSpec spec{mesh, {Shard{1}, Partial{}}, TensorMeta{{16, 6, 8}, {48, 8, 1}, ScalarType::Float32}};
  CHECK(spec.ndim() == 3);
  CHECK(spec.dim_map() == std::vector<std::int64_t>{-1, 0, -1});
  CHECK(spec.num_shards_map() == std::vector<std::int64_t>{1, 4, 1});
  CHECK(spec.sums() == std::vector<int>{1});
  CHECK(spec.is_sharded());
  CHECK(spec.is_partial());
  CHECK_FALSE(spec.is_replicated());
  CHECK(to_string(spec) == "Spec(DM(4, 2), [S(1), P], f32[16, 6, 8])");

  const DTensorSpec both{mesh, {Shard{0}, Shard{0}}, TensorMeta{{16, 6}, {6, 1}, ScalarType::Float64}};
  CHECK(both.num_shards_map() == std::vector<std::int64_t>{8, 1});
  CHECK_THROWS_WITH_AS(both.dim_map(), doctest::Contains("sharded on several mesh dimensions"), Error);

  const DTensorSpec replicated{mesh, {Replicate{}, Replicate{}}, std::nullopt};
  CHECK(replicated.is_replicated());
  CHECK(to_string(replicated) == "Spec(DM(4, 2), [R, R])");
  CHECK_THROWS_WITH_AS(replicated.shape(), doctest::Contains("has no tensor meta"), Error);

  const DTensorSpec out_of_range{mesh, {Shard{3}, Replicate{}}, TensorMeta{{4, 4}, {4, 1}, ScalarType::Float32}};
  CHECK_THROWS_WITH_AS(out_of_range.dim_map(), doctest::Contains("shards dimension 3 of a tensor of 2 dimensions"),
                       Error);
}

TEST_CASE("specs compare and hash as upstream's: the meta counts when both have one") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  const TensorMeta meta{{8, 8}, {8, 1}, ScalarType::Float32};
  const DTensorSpec a{mesh, {Shard{0}}, meta};
  CHECK(a == DTensorSpec{init_device_mesh({8}), {Shard{0}}, meta});
  CHECK(a.hash() == DTensorSpec{mesh, {Shard{0}}, meta}.hash());
  CHECK(a != a.with_placements({Replicate{}}));
  CHECK(a != a.with_tensor_meta(TensorMeta{{8, 8}, {1, 8}, ScalarType::Float32}));
  CHECK(a != a.with_tensor_meta(TensorMeta{{8, 8}, {8, 1}, ScalarType::Float64}));
  const DTensorSpec bare{mesh, {Shard{0}}, std::nullopt};
  CHECK(bare != a);  // upstream: None == TensorMeta(...) is False
  CHECK(bare == DTensorSpec{mesh, {Shard{0}}, std::nullopt});
  CHECK(bare.with_tensor_meta(meta) == a);
  std::unordered_set<DTensorSpec> cache{a, bare, a.with_placements({Replicate{}})};
  CHECK(cache.size() == 3);
  CHECK(cache.count(DTensorSpec{mesh, {Shard{0}}, meta}) == 1);
}

}  // namespace test_dtensor_spec
