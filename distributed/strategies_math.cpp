// distributed/strategies_math.cpp: reductions, softmax and the loss (PyTorch 2.8's
// _ops/_math_ops.py): a linear reduction of a sharded dimension leaves a Partial of its reduction;
// softmax and nll_loss need their class dimension whole.
#include <algorithm>

#include "core/util/error.h"
#include "distributed/strategy_utils.h"

namespace strata::distributed {

namespace {

// Upstream's replicate_reduction_dims: Partial and Shards of the reduced dimensions become Replicate.
Placements replicate_reduction_dims(const Placements& ps, const std::vector<std::int64_t>& dims) {
  Placements out;
  for (const Placement& p : ps) {
    const bool reduced = p.is_shard() && std::find(dims.begin(), dims.end(), p.dim()) != dims.end();
    out.push_back(p.is_partial() || reduced ? Placement(Replicate{}) : p);
  }
  return out;
}

// Upstream's _infer_reduce_dims_map: where each input dimension lands, -1 if reduced away.
std::vector<std::int64_t> reduce_dims_map(const std::vector<std::int64_t>& dims, std::int64_t ndim, bool keep_dim) {
  std::vector<std::int64_t> map;
  std::int64_t next = 0;
  for (std::int64_t d = 0; d < ndim; ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    map.push_back(reduced && !keep_dim ? -1 : next++);
  }
  return map;
}

// Upstream's map_placements_after_reduction: a Shard of a reduced dimension becomes Partial(op).
Placements map_placements_after_reduction(const Placements& ps, const std::vector<std::int64_t>& dims,
                                          const std::vector<std::int64_t>& map, ReduceOp op) {
  Placements out;
  for (const Placement& p : ps) {
    if (!p.is_shard()) {
      out.push_back(p);
      continue;
    }
    const std::int64_t to = map[static_cast<std::size_t>(p.dim())];
    const bool reduced = to == -1 || std::find(dims.begin(), dims.end(), p.dim()) != dims.end();
    out.push_back(reduced ? Placement(Partial{op}) : Placement(Shard{to}));
  }
  return out;
}

// Upstream's linear_reduction_strategy (LINEAR_REDUCTION_OP_MAP): the input as it is, reduced.
template <ReduceOp Op>
OpStrategy linear_reduction(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const std::int64_t ndim = self.ndim();
  const FunctionSchema& fs = schema.op.schema();
  const int dim_idx = fs.argument_index("dim"), keep_idx = fs.argument_index("keepdim");
  std::vector<std::int64_t> dims;
  if (dim_idx >= 0 && schema.has_value(static_cast<std::size_t>(dim_idx))) {
    const IValue& v = schema.value(static_cast<std::size_t>(dim_idx));
    if (v.is_int()) dims.push_back(normalize_dim(v.to_int(), ndim));
    else
      for (std::int64_t d : v.to_int_list()) dims.push_back(normalize_dim(d, ndim));
  }
  if (dims.empty())  // no dim, or dim=[]: every dimension (torch's meaning of both)
    for (std::int64_t d = 0; d < ndim; ++d) dims.push_back(d);
  const bool keep = keep_idx >= 0 && schema.value(static_cast<std::size_t>(keep_idx)).to_bool();
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{self.mesh, self.placements, self.tensor_meta});
  spec.redistribute_cost.push_back({0.0});
  spec.output_specs.push_back(
      DTensorSpec{self.mesh, map_placements_after_reduction(self.placements, dims, reduce_dims_map(dims, ndim, keep), Op), {}});
  return OpStrategy{{std::move(spec)}};
}

// Upstream's softmax_strategy: the input replicated along the softmax dimension, the output alike.
OpStrategy softmax_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const std::int64_t dim = normalize_dim(schema.value(1).to_int(), self.ndim());
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{self.mesh, replicate_reduction_dims(self.placements, {dim}), self.tensor_meta});
  spec.redistribute_cost.push_back(generate_redistribute_costs(self, spec.input_specs[0]));
  spec.output_specs.push_back(DTensorSpec{self.mesh, spec.input_specs[0].placements, {}});
  return OpStrategy{{std::move(spec)}};
}

// Upstream's softmax_backward_strategy: follow grad_output or output, whichever has more shards.
OpStrategy softmax_backward_strategy(const OpSchema& schema) {
  const DTensorSpec& grad = schema.spec(0);
  const DTensorSpec& out = schema.spec(1);
  const std::int64_t dim = normalize_dim(schema.value(2).to_int(), grad.ndim());
  auto shards = [](const DTensorSpec& s) {
    std::int64_t n = 1;
    for (std::int64_t k : s.num_shards_map()) n *= k;
    return n;
  };
  const DTensorSpec& src = shards(grad) >= shards(out) ? grad : out;
  OpSpec spec;
  spec.output_specs.push_back(DTensorSpec{src.mesh, replicate_reduction_dims(src.placements, {dim}), {}});
  spec.redistribute_cost = {generate_redistribute_costs(grad, spec.output_specs[0]),
                            generate_redistribute_costs(out, spec.output_specs[0])};
  return OpStrategy{{std::move(spec)}};  // no input specs: both inputs take the output's
}

// Upstream's _skip_dim (the target lacks the class dimension) and _replicate_dims_start_at(.., 0).
Placements skip_dim(const Placements& ps, std::int64_t skipped) {
  Placements out;
  for (const Placement& p : ps) out.push_back(p.is_shard() && p.dim() >= skipped ? Placement(Shard{p.dim() - 1}) : p);
  return out;
}
Placements replicate_shards(const Placements& ps) {
  Placements out;
  for (const Placement& p : ps) out.push_back(p.is_shard() ? Placement(Replicate{}) : p);
  return out;
}

constexpr std::int64_t kReductionNone = 0, kReductionMean = 1;

// Upstream's nll_loss_forward_strategy: input whole along the classes, target following it, weight
// replicated; output and total_weight reduced from the target's placements.
OpStrategy nll_loss_forward_strategy(const OpSchema& schema) {
  const DTensorSpec& input = schema.spec(0);
  const DTensorSpec& target = schema.spec(1);
  const std::int64_t channel = input.ndim() >= 2 ? 1 : 0;
  const std::int64_t reduction = schema.value(3).to_int();
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{input.mesh, replicate_reduction_dims(input.placements, {channel}), input.tensor_meta});
  spec.input_specs.push_back(DTensorSpec{input.mesh, skip_dim(spec.input_specs[0].placements, channel), target.tensor_meta});
  spec.redistribute_cost = {generate_redistribute_costs(input, spec.input_specs[0]),
                            generate_redistribute_costs(target, spec.input_specs[1])};
  if (std::holds_alternative<DTensorSpec>(schema.args[2])) {
    const DTensorSpec& weight = schema.spec(2);
    spec.input_specs.push_back(DTensorSpec{weight.mesh, replicate_shards(weight.placements), weight.tensor_meta});
    spec.redistribute_cost.push_back(generate_redistribute_costs(weight, spec.input_specs.back()));
  }
  const DTensorSpec& tgt = spec.input_specs[1];
  if (reduction == kReductionNone) {
    spec.output_specs = {DTensorSpec{tgt.mesh, tgt.placements, {}},
                         DTensorSpec{tgt.mesh, Placements(tgt.placements.size(), Replicate{}), {}}};
  } else {
    std::vector<std::int64_t> dims;
    for (std::int64_t d = 0; d < tgt.ndim(); ++d) dims.push_back(d);
    const std::vector<std::int64_t> map = reduce_dims_map(dims, tgt.ndim(), false);
    if (reduction == kReductionMean) {
      const std::vector<std::int64_t> shards = tgt.num_shards_map();
      for (std::size_t d = 0; d < shards.size(); ++d)
        STRATA_CHECK(tgt.shape()[d] % shards[d] == 0,
                     "The intermediate results of nll_loss cannot be evenly sharded, resulting in biased mean result.");
    }
    const ReduceOp op = reduction == kReductionMean ? ReduceOp::Avg : ReduceOp::Sum;
    spec.output_specs = {DTensorSpec{tgt.mesh, map_placements_after_reduction(tgt.placements, dims, map, op), {}},
                         DTensorSpec{tgt.mesh, map_placements_after_reduction(tgt.placements, dims, map, ReduceOp::Sum), {}}};
  }
  return OpStrategy{{std::move(spec)}};
}

// Upstream's nll_loss_backward_strategy: as the forward, grad_output following the target (no
// reduction) or replicated, total_weight replicated; grad_input takes the input's spec.
OpStrategy nll_loss_backward_strategy(const OpSchema& schema) {
  const DTensorSpec& grad = schema.spec(0);
  const DTensorSpec& input = schema.spec(1);
  const DTensorSpec& target = schema.spec(2);
  const DTensorSpec& total_weight = schema.spec(6);
  const std::int64_t channel = input.ndim() >= 2 ? 1 : 0;
  const DTensorSpec in_spec{input.mesh, replicate_reduction_dims(input.placements, {channel}), input.tensor_meta};
  const DTensorSpec tgt_spec{input.mesh, skip_dim(in_spec.placements, channel), target.tensor_meta};
  const DTensorSpec grad_spec = schema.value(4).to_int() == kReductionNone
                                    ? tgt_spec
                                    : DTensorSpec{grad.mesh, replicate_shards(grad.placements), grad.tensor_meta};
  OpSpec spec;
  spec.input_specs = {grad_spec, in_spec, tgt_spec};
  if (std::holds_alternative<DTensorSpec>(schema.args[3])) {
    const DTensorSpec& weight = schema.spec(3);
    spec.input_specs.push_back(DTensorSpec{weight.mesh, replicate_shards(weight.placements), weight.tensor_meta});
  }
  spec.input_specs.push_back(
      DTensorSpec{total_weight.mesh, replicate_shards(total_weight.placements), total_weight.tensor_meta});
  const std::vector<const DTensorSpec*> inputs = schema.args_spec();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    spec.redistribute_cost.push_back(generate_redistribute_costs(*inputs[i], spec.input_specs[i]));
  spec.output_specs.push_back(DTensorSpec{in_spec.mesh, in_spec.placements, {}});
  return OpStrategy{{std::move(spec)}};
}

}  // namespace

void register_math_strategies(ShardingPropagator& p) {
  p.register_op_strategy("aten::sum", "", &linear_reduction<ReduceOp::Sum>);
  p.register_op_strategy("aten::sum", "dim_IntList", &linear_reduction<ReduceOp::Sum>);
  p.register_op_strategy("aten::mean", "", &linear_reduction<ReduceOp::Avg>);
  p.register_op_strategy("aten::mean", "dim", &linear_reduction<ReduceOp::Avg>);
  p.register_op_strategy("aten::max", "", &linear_reduction<ReduceOp::Max>);
  p.register_op_strategy("aten::max", "dim", &linear_reduction<ReduceOp::Max>);
  p.register_op_strategy("aten::_log_softmax", "", &softmax_strategy);
  p.register_op_strategy("aten::_softmax", "", &softmax_strategy);
  p.register_op_strategy("aten::_log_softmax_backward_data", "", &softmax_backward_strategy);
  p.register_op_strategy("aten::_softmax_backward_data", "", &softmax_backward_strategy);
  p.register_op_strategy("aten::nll_loss_forward", "", &nll_loss_forward_strategy);
  p.register_op_strategy("aten::nll_loss_backward", "", &nll_loss_backward_strategy);
}

}  // namespace strata::distributed
