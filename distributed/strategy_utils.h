// distributed/strategy_utils.h: what the strategy functions share (upstream's _ops/utils.py and
// _ops/_einsum_strategy.py): shardability, broadcast dim maps, redistribute costs of a candidate,
// the einsum-style generator of matrix-op candidates, and the registration function of each family.
// Used by the strategies_*.cpp files only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sharding_propagation.h"

namespace strata::distributed {

// A dimension in [0, ndim) (negative counts from the end).
std::int64_t normalize_dim(std::int64_t dim, std::int64_t ndim);

// Whether every dimension of `shape` has at least as many elements as shards in `spec`
// (upstream's is_tensor_shardable).
bool is_tensor_shardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec);

// The cost of moving `src` (a call's input spec) to `dst`, as one source's list (upstream's
// generate_redistribute_costs over an input strategy of one spec).
std::vector<double> generate_redistribute_costs(const DTensorSpec& src, const DTensorSpec& dst);

// For each dimension of the broadcast `common_shape`, the input dimension it comes from, -1 where
// the input broadcasts (absent or of size 1 against a larger one; upstream's infer_broadcast_dims_map).
std::vector<std::int64_t> infer_broadcast_dims_map(const std::vector<std::int64_t>& common_shape,
                                                   const std::vector<std::int64_t>& input_shape);
// `placements` of the broadcast result, mapped onto an input: a Shard of a broadcast dimension
// becomes Replicate (upstream's map_placements_after_broadcast).
Placements map_placements_after_broadcast(const Placements& placements, std::int64_t common_ndim,
                                          const std::vector<std::int64_t>& broadcast_dims_map);
// torch.broadcast_shapes; an error naming `op` when the shapes do not broadcast.
std::vector<std::int64_t> broadcast_shapes(const std::vector<std::vector<std::int64_t>>& shapes, std::string_view op);

// Upstream's gen_einsum_strategies for "ab,bc->ac"-style equations of one or two inputs: per mesh
// dimension the candidates all-Replicate, shard a batch dim, shard a contracting dim (output
// Partial), shard an lhs-only dim, shard an rhs-only dim (and with linearity all-Partial), in that
// order, the mesh's candidates being their product over mesh dimensions (the first mesh dimension
// varying slowest). Each OpSpec has one output spec and one input spec per input, no costs.
OpStrategy gen_einsum_strategies(std::string_view equation, const DeviceMesh& mesh, bool linearity = false);

// The candidate for every mesh dimension alike: builds the mesh-wide OpSpecs from per-mesh-dim
// placement lists [output, input 0, input 1, ...] (upstream's expand_to_full_mesh_op_strategy
// without the costs), product over mesh dimensions as gen_einsum_strategies.
std::vector<OpSpec> expand_to_full_mesh(const DeviceMesh& mesh, const std::vector<Placements>& per_mesh_dim,
                                        std::size_t num_outputs = 1);

// Fills `spec`'s costs for the schema's DTensor inputs (args_spec order) and reports whether every
// input is shardable as the spec wants; used to filter candidates.
bool cost_candidate(const OpSchema& schema, OpSpec& spec);

// The families (strategies_<family>.cpp).
void register_pointwise_strategies(ShardingPropagator& p);
void register_matrix_strategies(ShardingPropagator& p);
void register_view_strategies(ShardingPropagator& p);
void register_math_strategies(ShardingPropagator& p);
void register_tensor_strategies(ShardingPropagator& p);

}  // namespace strata::distributed
