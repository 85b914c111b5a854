// distributed/strategy_utils.cpp: the helpers every strategy family uses, and the einsum-style
// candidate generator of the matrix ops.
#include "distributed/strategy_utils.h"

#include <algorithm>
#include <string>

#include "core/util/error.h"
#include "distributed/redistribute_cost.h"

namespace strata::distributed {

std::int64_t normalize_dim(std::int64_t dim, std::int64_t ndim) { return dim < 0 ? dim + ndim : dim; }

bool is_tensor_shardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec) {
  std::vector<std::int64_t> shards(shape.size(), 1);
  for (std::size_t m = 0; m < spec.placements.size(); ++m) {
    const Placement& p = spec.placements[m];
    if (!p.is_shard()) continue;
    if (p.dim() < 0 || p.dim() >= static_cast<std::int64_t>(shape.size())) return false;
    shards[static_cast<std::size_t>(p.dim())] *= spec.mesh.size(static_cast<int>(m));
  }
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shards[i] > 1 && shape[i] < shards[i]) return false;
  return true;
}

std::vector<double> generate_redistribute_costs(const DTensorSpec& src, const DTensorSpec& dst) {
  return {redistribute_cost(src, dst)};
}

std::vector<std::int64_t> infer_broadcast_dims_map(const std::vector<std::int64_t>& common_shape,
                                                   const std::vector<std::int64_t>& input_shape) {
  const auto common = static_cast<std::int64_t>(common_shape.size());
  const auto in = static_cast<std::int64_t>(input_shape.size());
  std::vector<std::int64_t> map(common_shape.size(), -1);
  for (std::int64_t k = 1; k <= in && k <= common; ++k)
    if (input_shape[static_cast<std::size_t>(in - k)] == common_shape[static_cast<std::size_t>(common - k)])
      map[static_cast<std::size_t>(common - k)] = in - k;
  return map;
}

Placements map_placements_after_broadcast(const Placements& placements, std::int64_t common_ndim,
                                          const std::vector<std::int64_t>& broadcast_dims_map) {
  Placements out;
  for (const Placement& p : placements) {
    if (!p.is_shard()) {
      out.push_back(p);
      continue;
    }
    const std::int64_t mapped = broadcast_dims_map[static_cast<std::size_t>(normalize_dim(p.dim(), common_ndim))];
    out.push_back(mapped != -1 ? Placement(Shard{mapped}) : Placement(Replicate{}));
  }
  return out;
}

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::vector<std::int64_t>>& shapes, std::string_view op) {
  std::size_t ndim = 0;
  for (const auto& s : shapes) ndim = std::max(ndim, s.size());
  std::vector<std::int64_t> out(ndim, 1);
  for (const auto& s : shapes) {
    for (std::size_t k = 1; k <= s.size(); ++k) {
      std::int64_t& o = out[ndim - k];
      const std::int64_t v = s[s.size() - k];
      STRATA_CHECK(v == o || v == 1 || o == 1, op, ": shapes do not broadcast (size ", v, " against ", o,
                   " at dimension ", ndim - k, ")");
      if (o == 1) o = v;
    }
  }
  return out;
}

std::vector<OpSpec> expand_to_full_mesh(const DeviceMesh& mesh, const std::vector<Placements>& per_mesh_dim,
                                        std::size_t num_outputs) {
  const int ndim = mesh.ndim();
  const std::size_t n = per_mesh_dim.size();
  std::vector<OpSpec> out;
  if (n == 0) return out;
  const std::size_t num_specs = per_mesh_dim[0].size();
  std::vector<std::size_t> idx(static_cast<std::size_t>(ndim), 0);  // an odometer, last mesh dim fastest
  while (true) {
    std::vector<Placements> placements(num_specs);
    for (int d = 0; d < ndim; ++d)
      for (std::size_t s = 0; s < num_specs; ++s) placements[s].push_back(per_mesh_dim[idx[static_cast<std::size_t>(d)]][s]);
    OpSpec spec;
    for (std::size_t s = 0; s < num_specs; ++s)
      (s < num_outputs ? spec.output_specs : spec.input_specs).push_back(DTensorSpec{mesh, std::move(placements[s]), {}});
    out.push_back(std::move(spec));
    int d = ndim - 1;
    while (d >= 0 && ++idx[static_cast<std::size_t>(d)] == n) idx[static_cast<std::size_t>(d--)] = 0;
    if (d < 0) break;
  }
  return out;
}

OpStrategy gen_einsum_strategies(std::string_view equation, const DeviceMesh& mesh, bool linearity) {
  const std::size_t arrow = equation.find("->");
  STRATA_CHECK(arrow != std::string_view::npos, "gen_einsum_strategies: no '->' in ", equation);
  const std::string_view lhs = equation.substr(0, arrow);
  const std::string out(equation.substr(arrow + 2));
  std::vector<std::string> inputs;
  for (std::size_t start = 0;;) {
    const std::size_t comma = lhs.find(',', start);
    inputs.emplace_back(lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  STRATA_CHECK(inputs.size() <= 2 && out.find(',') == std::string::npos,
               "gen_einsum_strategies: only one or two inputs and one output: ", equation);
  std::string chars;
  for (const std::string& in : inputs) chars += in;
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());  // upstream's sorted(set(...))

  const std::size_t n = inputs.size() + 1;
  auto pos = [](const std::string& s, char c) { return static_cast<std::int64_t>(s.find(c)); };
  std::vector<Placements> batch, contracting, lhs_only, rhs_only;
  for (char c : chars) {
    if (out.find(c) == std::string::npos) {
      Placements p{Partial{}};
      for (const std::string& in : inputs) p.push_back(Shard{pos(in, c)});
      contracting.push_back(std::move(p));
      continue;
    }
    bool is_batch = true;
    for (const std::string& in : inputs) is_batch = is_batch && in.find(c) != std::string::npos;
    if (is_batch) {
      Placements p{Shard{pos(out, c)}};
      for (const std::string& in : inputs) p.push_back(Shard{pos(in, c)});
      batch.push_back(std::move(p));
      continue;
    }
    STRATA_CHECK(inputs.size() == 2, "gen_einsum_strategies: free dimension only supported for two inputs: ", equation);
    if (inputs[0].find(c) != std::string::npos) lhs_only.push_back(Placements{Shard{pos(out, c)}, Shard{pos(inputs[0], c)}, Replicate{}});
    else rhs_only.push_back(Placements{Shard{pos(out, c)}, Replicate{}, Shard{pos(inputs[1], c)}});
  }
  std::vector<Placements> per_mesh_dim{Placements(n, Replicate{})};
  for (auto* group : {&batch, &contracting, &lhs_only, &rhs_only})
    per_mesh_dim.insert(per_mesh_dim.end(), group->begin(), group->end());
  if (linearity) per_mesh_dim.push_back(Placements(n, Partial{}));
  return OpStrategy{expand_to_full_mesh(mesh, per_mesh_dim)};
}

bool cost_candidate(const OpSchema& schema, OpSpec& spec) {
  const std::vector<const DTensorSpec*> inputs = schema.args_spec();
  STRATA_CHECK(spec.input_specs.size() == inputs.size(), schema.op.str(), ": a candidate with ",
               spec.input_specs.size(), " input specs for ", inputs.size(), " DTensor arguments");
  spec.redistribute_cost.clear();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!is_tensor_shardable(inputs[i]->shape(), spec.input_specs[i])) return false;
    spec.redistribute_cost.push_back(generate_redistribute_costs(*inputs[i], spec.input_specs[i]));
  }
  return true;
}

void register_default_strategies(ShardingPropagator& p) {
  register_pointwise_strategies(p);
  register_matrix_strategies(p);
  register_view_strategies(p);
  register_math_strategies(p);
  register_tensor_strategies(p);
}

}  // namespace strata::distributed
