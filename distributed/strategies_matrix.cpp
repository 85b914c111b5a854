// distributed/strategies_matrix.cpp: the matrix ops' strategies (PyTorch 2.8's _ops/_matrix_ops.py):
// mm, bmm, addmm and baddbmm from the einsum-style candidates, kept when both operands can be
// sharded as they say; t swaps its input's Shard dimensions.
#include "core/util/error.h"
#include "distributed/strategy_utils.h"

namespace strata::distributed {

namespace {

// Upstream's _mm_like_strategy: every einsum candidate whose operands are shardable, costed.
OpStrategy mm_like(const OpSchema& schema, std::string_view equation) {
  OpStrategy all = gen_einsum_strategies(equation, schema.spec(0).mesh);
  OpStrategy kept;
  for (OpSpec& spec : all.strategies)
    if (cost_candidate(schema, spec)) kept.strategies.push_back(std::move(spec));
  return kept;
}

// Upstream's _addmm_like_strategy: as mm_like on (mat1, mat2), with self following the product's
// placements through broadcasting.
OpStrategy addmm_like(const OpSchema& schema, std::string_view equation) {
  const DTensorSpec& self = schema.spec(0);
  const DTensorSpec& mat1 = schema.spec(1);
  const DTensorSpec& mat2 = schema.spec(2);
  std::vector<std::int64_t> out_shape = mat1.shape();
  STRATA_CHECK(!out_shape.empty() && !mat2.shape().empty(), schema.op.str(), ": matrices expected");
  out_shape.back() = mat2.shape().back();
  const std::vector<std::int64_t> dims_map = infer_broadcast_dims_map(out_shape, self.shape());
  OpStrategy all = gen_einsum_strategies(equation, mat1.mesh);
  OpStrategy kept;
  for (OpSpec& spec : all.strategies) {
    if (!is_tensor_shardable(mat1.shape(), spec.input_specs[0]) || !is_tensor_shardable(mat2.shape(), spec.input_specs[1]))
      continue;
    DTensorSpec self_spec{mat1.mesh,
                          map_placements_after_broadcast(spec.output_spec().placements,
                                                         static_cast<std::int64_t>(out_shape.size()), dims_map),
                          {}};
    spec.input_specs.insert(spec.input_specs.begin(), std::move(self_spec));
    spec.redistribute_cost = {generate_redistribute_costs(self, spec.input_specs[0]),
                              generate_redistribute_costs(mat1, spec.input_specs[1]),
                              generate_redistribute_costs(mat2, spec.input_specs[2])};
    kept.strategies.push_back(std::move(spec));
  }
  return kept;
}

OpStrategy mm_strategy(const OpSchema& schema) { return mm_like(schema, "mk,kn->mn"); }
OpStrategy bmm_strategy(const OpSchema& schema) { return mm_like(schema, "bmk,bkn->bmn"); }
OpStrategy addmm_strategy(const OpSchema& schema) { return addmm_like(schema, "mk,kn->mn"); }
OpStrategy baddbmm_strategy(const OpSchema& schema) { return addmm_like(schema, "bmk,bkn->bmn"); }

// Upstream's transpose_strategy for t: the input as it is, its Shard(d) becoming Shard(1 - d).
OpStrategy t_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  Placements out;
  for (const Placement& p : self.placements) out.push_back(p.is_shard() ? Placement(Shard{1 - p.dim()}) : p);
  OpSpec spec;
  spec.output_specs.push_back(DTensorSpec{self.mesh, std::move(out), {}});
  spec.input_specs.push_back(DTensorSpec{self.mesh, self.placements, {}});
  spec.redistribute_cost.push_back({0.0});
  return OpStrategy{{std::move(spec)}};
}

}  // namespace

void register_matrix_strategies(ShardingPropagator& p) {
  p.register_op_strategy("aten::mm", "", &mm_strategy);
  p.register_op_strategy("aten::bmm", "", &bmm_strategy);
  p.register_op_strategy("aten::addmm", "", &addmm_strategy);
  p.register_op_strategy("aten::baddbmm", "", &baddbmm_strategy);
  p.register_op_strategy("aten::t", "", &t_strategy);
}

}  // namespace strata::distributed
