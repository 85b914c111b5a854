// bench/sharding_bench.cpp: the cached sharding propagation. A repeated op finds its sharding in the
// propagator's cache (one hash of the call's specs and values, one comparison): its cost beside an
// unordered_map lookup of a plain integer key in the same run, the same lookup when the cache holds
// 10,000 other calls (O(1): the ratio stays near 1), and the first, uncached propagation (candidates,
// costs and the meta kernel) for scale. On a FakeWorld: no ranks, no threads.
#include "bench/sharding_bench.h"

#include <cstdint>
#include <unordered_map>

#include "bench/timing.h"
#include "distributed/fake_process_group.h"
#include "distributed/sharding_propagation.h"
#include "ops/op_table.h"

namespace strata::bench {

namespace {

distributed::DTensorSpec spec(const distributed::DeviceMesh& mesh, distributed::Placements p,
                              std::vector<std::int64_t> shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return {mesh, std::move(p), distributed::TensorMeta{std::move(shape), std::move(stride), ScalarType::Float32}};
}

}  // namespace

void sharding_benchmarks(nlohmann::ordered_json& out) {
  using namespace strata::distributed;
  const FakeWorld world(1, 8);
  const DeviceMesh mesh8 = init_device_mesh({8}), mesh42 = init_device_mesh({4, 2});
  ShardingPropagator p;
  register_default_strategies(p);
  // The seed's two ops: mm on a mesh of 8, bmm on (4, 2).
  const OpSchema mm{ops::op("aten::mm"), {spec(mesh8, {Shard{0}}, {8, 8}), spec(mesh8, {Shard{0}}, {8, 32})}};
  const OpSchema bmm{ops::op("aten::bmm"), {spec(mesh42, {Partial{}, Replicate{}}, {1, 96, 8}),
                                            spec(mesh42, {Replicate{}, Partial{}}, {1, 8, 16})}};
  p.propagate(mm);
  p.propagate(bmm);
  std::unordered_map<std::uint64_t, int> plain;
  for (std::uint64_t k = 0; k < 64; ++k) plain.emplace(k * 0x9e3779b97f4a7c15ULL, static_cast<int>(k));
  const std::uint64_t key = 7 * 0x9e3779b97f4a7c15ULL;
  const Paired hit = paired_median_ns([&] { keep(p.propagate(mm)); }, [&] { keep(plain.find(key)); });
  out["sharding_prop_hit_mm_ns"] = round3(hit.a_ns);
  out["unordered_map_find_u64_ns"] = round3(hit.b_ns);
  out["sharding_prop_hit_vs_map_find"] = round3(hit.ratio);
  out["sharding_prop_hit_bmm_2d_ns"] = round3(median_ns([&] { keep(p.propagate(bmm)); }));

  // 10,000 other calls in the cache: the hit costs what it cost with two.
  for (std::int64_t n = 1; n <= 10000; ++n)
    p.propagate({ops::op("aten::mm"), {spec(mesh8, {Shard{0}}, {8, 8}), spec(mesh8, {Shard{0}}, {8, n + 32})}});
  const Paired full = paired_median_ns([&] { keep(p.propagate(mm)); }, [&] { keep(plain.find(key)); });
  out["sharding_prop_hit_mm_10k_entries_ns"] = round3(full.a_ns);
  out["sharding_prop_hit_10k_vs_map_find"] = round3(full.ratio);
  out["sharding_prop_cache_hits"] = p.cache_stats().hits;

  out["sharding_prop_miss_mm_ns"] = round3(median_ns([&] { keep(p.propagate_non_cached(mm)); }, 11));
  out["sharding_prop_miss_bmm_2d_ns"] = round3(median_ns([&] { keep(p.propagate_non_cached(bmm)); }, 11));
}

}  // namespace strata::bench
