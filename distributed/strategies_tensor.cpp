// distributed/strategies_tensor.cpp: the tensor ops' strategies (PyTorch 2.8's _ops/_tensor_ops.py):
// ops that keep their input's placements (clone, detach, copy_, fill_, zero_), the *_like factories
// (a Partial input gives a Replicate output: the new values are not pending sums), and cat, split,
// stack, slice and select, which need the joined or cut dimension whole.
#include <algorithm>

#include "core/util/error.h"
#include "distributed/strategy_utils.h"

namespace strata::distributed {

namespace {

// Upstream's default_strategy: the output takes self's placements and every input follows it.
OpStrategy default_strategy(const OpSchema& schema) {
  const DTensorSpec& self = *schema.args_spec().at(0);
  OpSpec spec;
  spec.output_specs.push_back(DTensorSpec{self.mesh, self.placements, {}});
  for (const DTensorSpec* in : schema.args_spec()) spec.redistribute_cost.push_back(generate_redistribute_costs(*in, spec.output_specs[0]));
  return OpStrategy{{std::move(spec)}};
}

// Upstream's create_like_strategy: the input as it is; the output's Partials are Replicate.
OpStrategy create_like_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  Placements out;
  for (const Placement& p : self.placements) out.push_back(p.is_partial() ? Placement(Replicate{}) : p);
  OpSpec spec;
  spec.output_specs.push_back(DTensorSpec{self.mesh, std::move(out), {}});
  spec.input_specs.push_back(self);
  spec.redistribute_cost.push_back({0.0});
  return OpStrategy{{std::move(spec)}};
}

// Upstream's unshard_tensor_dim: a Shard of `dim` becomes Replicate.
Placements unshard_tensor_dim(const Placements& ps, std::int64_t dim) {
  Placements out;
  for (const Placement& p : ps) out.push_back(p.is_shard(dim) ? Placement(Replicate{}) : p);
  return out;
}

// Upstream's merge_placement: with several operands, Partial yields to Shard, Shard to nothing but a
// different Shard (then Replicate), Replicate to anything.
Placement merge_placement(const Placement& cur, const Placement& next) {
  if (cur == next) return cur;
  if (cur.is_partial()) return next.is_shard() ? next : next.is_partial() ? Placement(Replicate{}) : cur;
  if (cur.is_shard()) return next.is_shard() ? Placement(Replicate{}) : cur;
  return next;
}

// Upstream's _derive_follow_placements_from_tuple_strategy: the operands' placements merged.
Placements follow_placements(const OpSchema& schema, const std::vector<DTensorSpec>& tensors) {
  STRATA_CHECK(!tensors.empty(), schema.op.str(), ": no tensors to join");
  const DeviceMesh& mesh = tensors[0].mesh;
  Placements follow = tensors[0].placements;
  for (const DTensorSpec& t : tensors) {
    STRATA_CHECK(t.mesh == mesh, "All operands in ", schema.op.str(), " must have the same mesh, but got ",
                 t.mesh.short_str(), " and ", mesh.short_str(), ".");
    for (std::size_t m = 0; m < follow.size(); ++m) follow[m] = merge_placement(follow[m], t.placements[m]);
  }
  return follow;
}

// Every operand takes `in`, the output `out`.
OpStrategy join_strategy(const std::vector<DTensorSpec>& tensors, const Placements& in, Placements out) {
  OpSpec spec;
  for (const DTensorSpec& t : tensors) {
    spec.input_specs.push_back(DTensorSpec{t.mesh, in, {}});
    spec.redistribute_cost.push_back(generate_redistribute_costs(t, spec.input_specs.back()));
  }
  spec.output_specs.push_back(DTensorSpec{tensors[0].mesh, std::move(out), {}});
  return OpStrategy{{std::move(spec)}};
}

// Upstream's cat_strategy of 2.8: every operand follows the merged placements, unsharded on `dim`.
OpStrategy cat_strategy(const OpSchema& schema) {
  const std::vector<DTensorSpec>& tensors = schema.spec_list(0);
  const Placements follow =
      unshard_tensor_dim(follow_placements(schema, tensors), normalize_dim(schema.value(1).to_int(), tensors.at(0).ndim()));
  return join_strategy(tensors, follow, follow);
}

// Upstream's stack_strategy: the merged placements, each Shard at or after the new dimension moved
// one further in the output (normalize_shard_for_stack; the dimension normalized on the inputs' rank,
// as upstream does).
OpStrategy stack_strategy(const OpSchema& schema) {
  const std::vector<DTensorSpec>& tensors = schema.spec_list(0);
  const Placements follow = follow_placements(schema, tensors);
  const std::int64_t dim = normalize_dim(schema.value(1).to_int(), tensors[0].ndim());
  Placements out;
  for (const Placement& p : follow) out.push_back(p.is_shard() && p.dim() >= dim ? Placement(Shard{p.dim() + 1}) : p);
  return join_strategy(tensors, follow, std::move(out));
}

// Upstream's gen_slice_strategy: the input's placements, unsharded on the sliced dimension unless the
// slice takes all of it.
OpStrategy slice_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const std::int64_t dim = normalize_dim(schema.value(1).to_int(), self.ndim());
  const std::int64_t size = self.shape()[static_cast<std::size_t>(dim)];
  std::int64_t start = schema.has_value(2) ? schema.value(2).to_int() : 0;
  std::int64_t end = schema.has_value(3) ? schema.value(3).to_int() : size;
  if (end > size) end = size;
  start = normalize_dim(start, size), end = normalize_dim(end, size);
  const bool whole = start == 0 && end == size && schema.value(4).to_int() == 1;
  OpSpec spec;
  spec.output_specs.push_back(DTensorSpec{self.mesh, whole ? self.placements : unshard_tensor_dim(self.placements, dim), {}});
  spec.redistribute_cost.push_back(generate_redistribute_costs(self, spec.output_specs[0]));
  return OpStrategy{{std::move(spec)}};
}

// Upstream's select_int_strategy: unsharded on the selected dimension, later Shards one lower.
OpStrategy select_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const std::int64_t dim = normalize_dim(schema.value(1).to_int(), self.ndim());
  const Placements in = unshard_tensor_dim(self.placements, dim);
  Placements out;
  for (const Placement& p : in) out.push_back(p.is_shard() && p.dim() > dim ? Placement(Shard{p.dim() - 1}) : p);
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{self.mesh, in, self.tensor_meta});
  spec.redistribute_cost.push_back(generate_redistribute_costs(self, spec.input_specs[0]));
  spec.output_specs.push_back(DTensorSpec{self.mesh, std::move(out), {}});
  return OpStrategy{{std::move(spec)}};
}

// Upstream's split_strategy: every piece and the input unsharded on the split dimension.
OpStrategy split_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const std::int64_t dim = normalize_dim(schema.value(2).to_int(), self.ndim());
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{self.mesh, unshard_tensor_dim(self.placements, dim), self.tensor_meta});
  spec.redistribute_cost.push_back(generate_redistribute_costs(self, spec.input_specs[0]));
  spec.output_specs.push_back(DTensorSpec{self.mesh, spec.input_specs[0].placements, {}});  // for every piece
  return OpStrategy{{std::move(spec)}};
}

// Upstream's new_factory_strategy (new_empty_strided): a replicated new tensor, or, when it has the
// input's shape and the input is sharded evenly, the input's placements at a cost of -0.1 (upstream's
// nudge towards them; the first candidate of least cost wins, so it does).
OpStrategy new_factory_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const IntArrayRef size = schema.value(1).to_int_list();
  const auto ndim = static_cast<std::size_t>(self.mesh.ndim());
  OpStrategy out;
  OpSpec replica;
  replica.output_specs.push_back(DTensorSpec{self.mesh, Placements(ndim, Replicate{}), {}});
  replica.input_specs.push_back(self);
  replica.redistribute_cost.push_back(std::vector<double>(ndim, 0.0));
  out.strategies.push_back(std::move(replica));
  const bool same_shape = std::equal(size.begin(), size.end(), self.shape().begin(), self.shape().end());
  if (same_shape && self.is_sharded()) {
    const std::vector<std::int64_t> shards = self.num_shards_map();
    bool even = true;
    for (std::size_t d = 0; d < shards.size(); ++d) even = even && self.shape()[d] % shards[d] == 0;
    if (even) {
      OpSpec follow;
      follow.output_specs.push_back(DTensorSpec{self.mesh, self.placements, {}});
      follow.input_specs.push_back(self);
      follow.redistribute_cost.push_back(std::vector<double>(ndim, -0.1));
      out.strategies.push_back(std::move(follow));
    }
  }
  return out;
}

}  // namespace

void register_tensor_strategies(ShardingPropagator& p) {
  for (const char* name : {"aten::clone", "aten::detach", "aten::copy_", "aten::zero_", "aten::_to_copy"})
    p.register_op_strategy(name, "", &default_strategy);
  p.register_op_strategy("aten::fill_", "Scalar", &default_strategy);
  for (const char* name : {"aten::empty_like", "aten::ones_like", "aten::zeros_like"})
    p.register_op_strategy(name, "", &create_like_strategy);
  p.register_op_strategy("aten::new_empty_strided", "", &new_factory_strategy);
  p.register_op_strategy("aten::cat", "", &cat_strategy);
  p.register_op_strategy("aten::stack", "", &stack_strategy);
  p.register_op_strategy("aten::slice", "Tensor", &slice_strategy);
  p.register_op_strategy("aten::select", "int", &select_strategy);
  p.register_op_strategy("aten::split", "Tensor", &split_strategy);
  p.register_op_strategy("aten::split_with_sizes", "", &split_strategy);
}

}  // namespace strata::distributed
