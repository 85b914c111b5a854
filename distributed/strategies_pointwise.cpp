// distributed/strategies_pointwise.cpp: the pointwise ops' strategy (PyTorch 2.8's
// _ops/_pointwise_ops.py): the output follows the input with the most shards, every input follows
// the output through broadcasting, and Partial survives only the linear ops.
#include <string_view>

#include "core/util/error.h"
#include "distributed/strategy_utils.h"

namespace strata::distributed {

namespace {

std::int64_t num_shards(const DTensorSpec& s) {
  std::int64_t n = 1;
  for (std::size_t m = 0; m < s.placements.size(); ++m)
    if (s.placements[m].is_shard()) n *= s.mesh.size(static_cast<int>(m));
  return n;
}

// Note [Which pointwise ops keep Partial]
// A linear op of a pending sum is the pending sum of the op: add(P, P) is P, div(P, 2) is P, and
// add(P, R) is P once R is divided among the ranks (which redistributing R to P does, at no cost in
// the model). PyTorch 2.8 lists add.Tensor, add_.Tensor, div.Scalar, div_.Scalar and to.dtype as
// linear; every other pointwise op turns the followed input's Partial into Replicate (an all_reduce
// first). Later releases also keep P through mul by a scalar, sub and mul by a replicated tensor;
// strata's choices follow 2.8.
OpStrategy pointwise_strategy(const OpSchema& schema, bool linearity) {
  const std::vector<const DTensorSpec*> inputs = schema.args_spec();
  STRATA_CHECK(!inputs.empty(), schema.op.str(), ": a pointwise op without DTensor arguments");
  // In-place ops follow self; the others the input with the most shards, then the most dimensions.
  std::size_t followed = 0;
  const std::string& name = schema.op.name().name;
  if (name.empty() || name.back() != '_') {
    std::int64_t max_shards = -1, max_ndim = -1;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::int64_t shards = num_shards(*inputs[i]), ndim = inputs[i]->ndim();
      if (shards > max_shards || (shards == max_shards && ndim > max_ndim)) followed = i, max_shards = shards, max_ndim = ndim;
    }
  }
  std::vector<std::vector<std::int64_t>> shapes;
  for (const DTensorSpec* s : inputs) shapes.push_back(s->shape());
  const std::vector<std::int64_t> common = broadcast_shapes(shapes, schema.op.str());
  const auto common_ndim = static_cast<std::int64_t>(common.size());

  const DTensorSpec& to_follow = *inputs[followed];
  Placements out;
  for (const Placement& p : to_follow.placements) {
    if (p.is_shard()) out.push_back(Shard{common_ndim - to_follow.ndim() + normalize_dim(p.dim(), to_follow.ndim())});
    else if (p.is_partial() && !linearity) out.push_back(Replicate{});
    else out.push_back(p);
  }
  OpSpec spec;
  for (const DTensorSpec* in : inputs) {
    DTensorSpec target{to_follow.mesh, map_placements_after_broadcast(out, common_ndim, infer_broadcast_dims_map(common, in->shape())),
                       in->tensor_meta};
    spec.redistribute_cost.push_back(generate_redistribute_costs(*in, target));
    spec.input_specs.push_back(std::move(target));
  }
  spec.output_specs.push_back(DTensorSpec{to_follow.mesh, std::move(out), {}});
  return OpStrategy{{std::move(spec)}};
}

OpStrategy plain_pointwise(const OpSchema& schema) { return pointwise_strategy(schema, false); }
OpStrategy linear_pointwise(const OpSchema& schema) { return pointwise_strategy(schema, true); }

}  // namespace

void register_pointwise_strategies(ShardingPropagator& p) {
  struct Row {
    std::string_view name, overload;
  };
  static constexpr Row linear[] = {
      {"aten::add", "Tensor"}, {"aten::add_", "Tensor"}, {"aten::div", "Scalar"}, {"aten::div_", "Scalar"},
  };
  // The ops of upstream's pointwise_ops list that strata has.
  static constexpr Row plain[] = {
      {"aten::abs", ""},          {"aten::add", "Scalar"},      {"aten::sub", "Tensor"},
      {"aten::sub_", "Tensor"},   {"aten::sub", "Scalar"},      {"aten::mul", "Tensor"},
      {"aten::mul_", "Tensor"},   {"aten::mul", "Scalar"},      {"aten::mul_", "Scalar"},
      {"aten::div", "Tensor"},    {"aten::neg", ""},            {"aten::exp", ""},
      {"aten::reciprocal", ""},   {"aten::relu", ""},           {"aten::sigmoid", ""},
      {"aten::sigmoid_backward", ""}, {"aten::silu", ""},       {"aten::silu_backward", ""},
      {"aten::tanh", ""},         {"aten::tanh_backward", ""},  {"aten::gelu", ""},
      {"aten::gelu_backward", ""}, {"aten::threshold_backward", ""}, {"aten::sqrt", ""},
      {"aten::rsqrt", ""},        {"aten::log", ""},            {"aten::sin", ""},
      {"aten::cos", ""},          {"aten::sgn", ""},            {"aten::pow", "Tensor_Scalar"},
      {"aten::pow", "Tensor_Tensor"}, {"aten::clamp", ""},      {"aten::eq", "Tensor"},
      {"aten::eq", "Scalar"},     {"aten::ne", "Tensor"},       {"aten::ne", "Scalar"},
      {"aten::gt", "Tensor"},     {"aten::gt", "Scalar"},       {"aten::ge", "Tensor"},
      {"aten::ge", "Scalar"},     {"aten::lt", "Tensor"},       {"aten::lt", "Scalar"},
      {"aten::le", "Tensor"},     {"aten::le", "Scalar"},       {"aten::isnan", ""},
      {"aten::logical_and", ""},  {"aten::logical_and_", ""},   {"aten::logical_or_", ""},
      {"aten::where", "self"},
  };
  for (const Row& r : linear) p.register_op_strategy(r.name, r.overload, &linear_pointwise);
  for (const Row& r : plain) p.register_op_strategy(r.name, r.overload, &plain_pointwise);
}

}  // namespace strata::distributed
