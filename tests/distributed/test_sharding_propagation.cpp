// tests/distributed/test_sharding_propagation.cpp: the propagator in spec space on fake meshes: the
// seed's two choices (mm on a mesh of 8, bmm on a (4, 2) mesh), pointwise ops with broadcasting and
// Partial, upstream's cost formulas worked by hand, the cache and the missing-strategy error.
#include <doctest/doctest.h>

#include <cmath>

#include "core/util/error.h"
#include "distributed/fake_process_group.h"
#include "distributed/redistribute_cost.h"
#include "distributed/sharding_propagation.h"
#include "ops/op_table.h"

namespace test_sharding_propagation {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TensorMeta contiguous(std::vector<std::int64_t> shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return TensorMeta{std::move(shape), std::move(stride), ScalarType::Float32};
}
DTensorSpec spec(const DeviceMesh& mesh, Placements p, std::vector<std::int64_t> shape) {
  return DTensorSpec{mesh, std::move(p), contiguous(std::move(shape))};
}
std::string placements_of(const std::optional<DTensorSpec>& s) { return s ? to_string(s->placements) : "none"; }

TEST_CASE("mm of two S(0) on a mesh of 8 gathers input 1 and keeps S(0), as the seed") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  const OpSchema schema{ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Shard{0}}, {8, 32})}};
  const OutputSharding out = sharding_propagator().propagate_non_cached(schema);
  CHECK(out.needs_redistribute);
  REQUIRE(out.input_specs.size() == 2);
  CHECK(to_string(out.input_specs[0].placements) == "[S(0)]");
  CHECK(to_string(out.input_specs[1].placements) == "[R]");
  CHECK(out.input_specs[1].tensor_meta == contiguous({8, 32}));  // the input's meta travels with it
  REQUIRE(out.output_specs.size() == 1);
  CHECK(placements_of(out.output_specs[0]) == "[S(0)]");
  CHECK(out.output_specs[0]->tensor_meta == contiguous({8, 32}));
  // The candidates in upstream's order: R, contracting k, lhs m, rhs n; lhs wins at one all_gather.
  const OpStrategy all = sharding_propagator().strategies(schema);
  REQUIRE(all.strategies.size() == 4);
  CHECK(to_string(all.strategies[1].output_spec().placements) == "[P]");
  CHECK(out.chosen_index == 2);
  CHECK(all.strategies[2].total_cost() < all.strategies[1].total_cost());
}

TEST_CASE("bmm of [P, R] and [R, P] on a (4, 2) mesh shards the contracting dim twice, as the seed") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  const OpSchema schema{ops::op("aten::bmm"), {spec(mesh, {Partial{}, Replicate{}}, {1, 96, 8}),
                                               spec(mesh, {Replicate{}, Partial{}}, {1, 8, 16})}};
  const OutputSharding& out = sharding_propagator().propagate(schema);
  CHECK(out.needs_redistribute);
  CHECK(to_string(out.input_specs[0].placements) == "[S(2), S(2)]");
  CHECK(to_string(out.input_specs[1].placements) == "[S(1), S(1)]");
  CHECK(placements_of(out.output_specs[0]) == "[P, P]");
  CHECK(out.output_specs[0]->shape() == std::vector<std::int64_t>{1, 96, 16});
  // The batch dimension (1) cannot be sharded 4 ways: no candidate shards it.
  for (const OpSpec& s : sharding_propagator().strategies(schema).strategies)
    CHECK_FALSE(s.input_specs[0].placements[0] == Placement(Shard{0}));
}

TEST_CASE("a new world on the thread is not answered from the last world's cached shardings") {
  // Note [A new world empties the caches]: rank 1's (4, 2) mesh talks on groups "2" and "3", rank
  // 0's on "1" and "3"; the two meshes compare equal, so the same call keys the same entry.
  for (const int rank : {1, 0}) {
    FakeWorld world(rank, 8);
    const DeviceMesh mesh = init_device_mesh({4, 2});
    const OpSchema schema{ops::op("aten::bmm"), {spec(mesh, {Partial{}, Replicate{}}, {1, 96, 8}),
                                                 spec(mesh, {Replicate{}, Partial{}}, {1, 8, 16})}};
    const OutputSharding& out = sharding_propagator().propagate(schema);
    CHECK(out.input_specs[0].mesh.group_name(0) == (rank == 1 ? "2" : "1"));
    CHECK(out.output_specs[0]->mesh.group_name(0) == mesh.group_name(0));
  }
}

TEST_CASE("a column- then row-wise parallel MLP step moves nothing until the Partial output") {
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  ShardingPropagator& p = sharding_propagator();
  const Placements r{Replicate{}}, s0{Shard{0}}, s1{Shard{1}};
  // Column-wise: bias S(0), x R, w1^T S(1): the right-only candidate costs nothing.
  const OutputSharding col = p.propagate_non_cached(
      {ops::op("aten::addmm"), {spec(mesh, s0, {32}), spec(mesh, r, {8, 16}), spec(mesh, s1, {16, 32}), IValue(1), IValue(1)}});
  CHECK_FALSE(col.needs_redistribute);
  CHECK(col.output_specs[0]->placements == s1);
  CHECK(placements_of(p.propagate_non_cached({ops::op("aten::relu"), {spec(mesh, s1, {8, 32})}}).output_specs[0]) == "[S(1)]");
  // Row-wise: h S(1) @ w2^T S(0) contracts the sharded dimension: a Partial sum.
  const OutputSharding row =
      p.propagate_non_cached({ops::op("aten::mm"), {spec(mesh, s1, {8, 32}), spec(mesh, s0, {32, 4})}});
  CHECK_FALSE(row.needs_redistribute);
  CHECK(placements_of(row.output_specs[0]) == "[P]");
  // Backward of the column-wise layer: grad_w1 = x^T @ grad (S(1)), grad_x = grad @ w1 (Partial),
  // grad_bias = sum over the batch (S(1) kept, then viewed to S(0)).
  CHECK(placements_of(p.propagate_non_cached({ops::op("aten::mm"), {spec(mesh, r, {16, 8}), spec(mesh, s1, {8, 32})}})
                          .output_specs[0]) == "[S(1)]");
  CHECK(placements_of(p.propagate_non_cached({ops::op("aten::mm"), {spec(mesh, s1, {8, 32}), spec(mesh, s0, {32, 16})}})
                          .output_specs[0]) == "[P]");
  const OutputSharding bias = p.propagate_non_cached(
      {ops::op("aten::sum", "dim_IntList"), {spec(mesh, s1, {8, 32}), IValue(IntArrayRef(std::vector<std::int64_t>{0})), IValue(true), IValue()}});
  CHECK(placements_of(bias.output_specs[0]) == "[S(1)]");
  CHECK(placements_of(p.propagate_non_cached({ops::op("aten::view"), {spec(mesh, s1, {1, 32}), IValue(IntArrayRef(std::vector<std::int64_t>{32}))}})
                          .output_specs[0]) == "[S(0)]");
  CHECK(placements_of(p.propagate_non_cached({ops::op("aten::threshold_backward"), {spec(mesh, s1, {8, 32}), spec(mesh, s1, {8, 32}), IValue(0)}})
                          .output_specs[0]) == "[S(1)]");
}

TEST_CASE("redistribute_cost follows upstream's formulas on a CPU mesh") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh8 = init_device_mesh({8});
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double inter_bw = 87.7 * 0.22;  // every CPU mesh dimension counts as inter-host
  // S(0) -> R of f32[8, 32] on 8: all_gather of the whole 1024 bytes, 7 hops.
  const double gather = 6.6 + 7 * 2.7 + (1024.0 / gib * 7 / 8) / inter_bw * 1e6;
  CHECK(redistribute_cost(spec(mesh8, {Shard{0}}, {8, 32}), spec(mesh8, {Replicate{}}, {8, 32})) ==
        doctest::Approx(gather).epsilon(1e-12));
  // S(0) -> S(1): the all_gather of the shard's bytes plus upstream's penalty of 1.
  const double alltoall = 6.6 + 7 * 2.7 + (128.0 / gib * 7 / 8) / inter_bw * 1e6 + 1.0;
  CHECK(redistribute_cost(spec(mesh8, {Shard{0}}, {8, 32}), spec(mesh8, {Shard{1}}, {8, 32})) ==
        doctest::Approx(alltoall).epsilon(1e-12));
  // P -> R: all_reduce, twice the hops.
  const double reduce = 6.6 + 14 * 2.7 + (1024.0 / gib * 14 / 8) / inter_bw * 1e6;
  CHECK(redistribute_cost(spec(mesh8, {Partial{}}, {8, 32}), spec(mesh8, {Replicate{}}, {8, 32})) ==
        doctest::Approx(reduce).epsilon(1e-12));
  CHECK(redistribute_cost(spec(mesh8, {Replicate{}}, {8, 32}), spec(mesh8, {Partial{}}, {8, 32})) == 0.0);
  CHECK(std::isinf(redistribute_cost(spec(mesh8, {Shard{0}}, {8, 32}), spec(mesh8, {Partial{}}, {8, 32}))));

  // [P, R] -> [S(2), S(2)] of f32[1, 96, 8] on (4, 2): a reduce_scatter on dimension 0 (4 ranks,
  // 3 hops, all 3072 bytes); R -> S on dimension 1 is free.
  const DeviceMesh mesh42 = init_device_mesh({4, 2});
  const double scatter = 6.6 + 3 * 2.7 + (3072.0 / gib * 3 / 4) / inter_bw * 1e6;
  CHECK(redistribute_cost(spec(mesh42, {Partial{}, Replicate{}}, {1, 96, 8}),
                          spec(mesh42, {Shard{2}, Shard{2}}, {1, 96, 8})) == doctest::Approx(scatter).epsilon(1e-12));
  // [P, P] -> [S(0), R]: reduce_scatter on 0 divides the bytes by 4, then all_reduce on 1 (2 ranks).
  const double then_reduce = 6.6 + 2 * 2.7 + (768.0 / gib * 2 / 2) / inter_bw * 1e6;
  CHECK(redistribute_cost(spec(mesh42, {Partial{}, Partial{}}, {1, 96, 8}),
                          spec(mesh42, {Shard{0}, Replicate{}}, {1, 96, 8})) ==
        doctest::Approx(scatter + then_reduce).epsilon(1e-12));
  // A GPU host of 8 devices: intra-host constants.
  const MeshTopoInfo gpu = MeshTopoInfo::build_from_mesh(mesh42, 8);
  CHECK(gpu.mesh_dim_bandwidth == std::vector<double>{87.7, 87.7});
  CHECK(gpu.mesh_dim_latency == std::vector<double>{0.6, 0.6});
  const MeshTopoInfo cpu = MeshTopoInfo::build_from_mesh(mesh42);
  CHECK(cpu.mesh_dim_latency == std::vector<double>{2.7, 2.7});
}

TEST_CASE("pointwise ops follow the most sharded input through broadcasting") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  ShardingPropagator& p = sharding_propagator();
  // x f32[8, 32] S(1) + bias f32[32] R: the bias is sharded on its own dimension 0 (free from R).
  const OutputSharding bias = p.propagate_non_cached(
      {ops::op("aten::add", "Tensor"), {spec(mesh, {Replicate{}}, {32}), spec(mesh, {Shard{1}}, {8, 32}), IValue(1)}});
  CHECK(to_string(bias.input_specs[0].placements) == "[S(0)]");
  CHECK(to_string(bias.input_specs[1].placements) == "[S(1)]");
  CHECK(placements_of(bias.output_specs[0]) == "[S(1)]");
  CHECK(bias.output_specs[0]->shape() == std::vector<std::int64_t>{8, 32});
  // A size-1 dimension broadcast against a sharded one stays whole: [8, 1] takes R.
  const OutputSharding col = p.propagate_non_cached(
      {ops::op("aten::mul", "Tensor"), {spec(mesh, {Shard{1}}, {8, 32}), spec(mesh, {Replicate{}}, {8, 1})}});
  CHECK(to_string(col.input_specs[1].placements) == "[R]");
  CHECK_FALSE(col.needs_redistribute);
  // Equal shard counts: the input of more dimensions is followed.
  const OutputSharding ndim = p.propagate_non_cached(
      {ops::op("aten::mul", "Tensor"), {spec(mesh, {Shard{0}}, {32}), spec(mesh, {Shard{0}}, {8, 32})}});
  CHECK(placements_of(ndim.output_specs[0]) == "[S(0)]");
  CHECK(to_string(ndim.input_specs[0].placements) == "[R]");
}

TEST_CASE("Partial passes the linear pointwise ops of PyTorch 2.8 and is reduced by the others") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  ShardingPropagator& p = sharding_propagator();
  const DTensorSpec partial = spec(mesh, {Partial{}}, {8, 4}), replicated = spec(mesh, {Replicate{}}, {8, 4});
  const OutputSharding add = p.propagate_non_cached({ops::op("aten::add", "Tensor"), {partial, partial, IValue(1)}});
  CHECK(placements_of(add.output_specs[0]) == "[P]");
  CHECK_FALSE(add.needs_redistribute);
  // P + R: R becomes P (its share divided among the ranks), at no cost.
  const OutputSharding mixed = p.propagate_non_cached({ops::op("aten::add", "Tensor"), {partial, replicated, IValue(1)}});
  CHECK(placements_of(mixed.output_specs[0]) == "[P]");
  CHECK(to_string(mixed.input_specs[1].placements) == "[P]");
  const OutputSharding div = p.propagate_non_cached({ops::op("aten::div", "Scalar"), {partial, IValue(2.0)}});
  CHECK(placements_of(div.output_specs[0]) == "[P]");
  // Not linear in 2.8: mul and sub reduce the Partial first.
  const OutputSharding mul = p.propagate_non_cached({ops::op("aten::mul", "Tensor"), {partial, replicated}});
  CHECK(placements_of(mul.output_specs[0]) == "[R]");
  CHECK(to_string(mul.input_specs[0].placements) == "[R]");
  CHECK(mul.needs_redistribute);
  const OutputSharding relu = p.propagate_non_cached({ops::op("aten::relu"), {partial}});
  CHECK(placements_of(relu.output_specs[0]) == "[R]");
}

TEST_CASE("a repeated call is answered from the cache") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  ShardingPropagator p;
  register_default_strategies(p);
  const OpSchema schema{ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Shard{0}}, {8, 32})}};
  const OutputSharding& first = p.propagate(schema);
  const OutputSharding& again = p.propagate(schema);
  CHECK(&first == &again);
  CHECK(p.cache_stats().hits == 1);
  CHECK(p.cache_stats().misses == 1);
  // Another placement, shape or value is another key.
  p.propagate({ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Replicate{}}, {8, 32})}});
  p.propagate({ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Shard{0}}, {8, 16})}});
  const DTensorSpec x = spec(mesh, {Shard{0}}, {8, 8});
  p.propagate({ops::op("aten::add", "Tensor"), {x, x, IValue(1)}});
  p.propagate({ops::op("aten::add", "Tensor"), {x, x, IValue(2)}});
  p.propagate({ops::op("aten::add", "Tensor"), {x, x, IValue(2)}});
  CHECK(p.cache_stats().misses == 5);
  CHECK(p.cache_stats().hits == 2);
  CHECK(p.cache_stats().size == 5);
  // Meshes of one shape over other ranks hash alike but are other keys.
  const DeviceMesh low({4}, {0, 1, 2, 3}), high({4}, {4, 5, 6, 7});
  p.propagate({ops::op("aten::relu"), {spec(low, {Shard{0}}, {8, 8})}});
  p.propagate({ops::op("aten::relu"), {spec(high, {Shard{0}}, {8, 8})}});
  CHECK(p.cache_stats().misses == 7);
  p.clear_cache();
  CHECK(p.cache_stats().size == 0);
  CHECK(p.cache_stats().hits == 0);
}

TEST_CASE("an op without a strategy gets upstream's error with the input placements") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  ShardingPropagator empty;
  const OpSchema schema{ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Replicate{}}, {8, 4})}};
  CHECK_THROWS_WITH_AS(empty.propagate(schema),
                       "Operator aten.mm.default does not have a sharding strategy registered. "
                       "(input placements: [S(0)], [R])",
                       Error);
  CHECK(empty.cache_stats().size == 0);
  // The meta kernel checks the call first, in the op's own words, as upstream's fake run does.
  CHECK_THROWS_WITH_AS(empty.propagate({ops::op("aten::mm"), {spec(mesh, {Shard{0}}, {8, 8}), spec(mesh, {Replicate{}}, {4, 4})}}),
                       doctest::Contains("cannot be multiplied"), Error);
}

}  // namespace test_sharding_propagation
