// distributed/strategies_view.cpp: the view ops' strategy (PyTorch 2.8's _ops/_view_ops.py): each
// op's dim map says where every output dimension comes from (an input dimension, a flattening of
// several, one piece of a split, a broadcast, a new singleton), and Shard placements follow it where
// the map allows, falling back to Replicate where it does not.
#include <memory>
#include <set>

#include "core/util/error.h"
#include "distributed/strategy_utils.h"

namespace strata::distributed {

namespace {

// One output dimension's origin (upstream's DimSpec subclasses).
struct DimSpec {
  enum class Kind { Input, Singleton, Broadcast, Flatten, Split } kind = Kind::Singleton;
  std::int64_t input_dim = -1;               // Input
  std::vector<DimSpec> inputs;               // Broadcast: one; Flatten: several; Split: one
  std::vector<std::int64_t> group_shape;     // Split
  std::size_t split_id = 0;                  // Split
  static DimSpec input(std::int64_t d) { return DimSpec{Kind::Input, d, {}, {}, 0}; }
  static DimSpec singleton() { return DimSpec{}; }
};
using DimMap = std::vector<DimSpec>;

// Upstream's Flatten.new: nothing is a singleton, one dimension itself.
DimSpec flatten(std::vector<DimSpec> dims) {
  if (dims.empty()) return DimSpec::singleton();
  if (dims.size() == 1) return dims[0];
  return DimSpec{DimSpec::Kind::Flatten, -1, std::move(dims), {}, 0};
}
// Upstream's Split.new: piece `idx` of `dim` cut to `group_shape`, singletons dropped from the group.
DimSpec split(const DimSpec& dim, const std::vector<std::int64_t>& group_shape, std::size_t idx) {
  if (group_shape.size() == 1) return dim;
  if (group_shape[idx] == 1) return DimSpec::singleton();
  std::vector<std::int64_t> kept;
  std::size_t new_idx = 0;
  for (std::size_t i = 0; i < group_shape.size(); ++i) {
    if (group_shape[i] == 1) continue;
    if (i == idx) new_idx = kept.size();
    kept.push_back(group_shape[i]);
  }
  return DimSpec{DimSpec::Kind::Split, -1, {dim}, std::move(kept), new_idx};
}

std::vector<std::int64_t> int_list(const OpSchema& s, std::size_t i) {
  const IntArrayRef v = s.value(i).to_int_list();
  return {v.begin(), v.end()};
}

// A shape with one -1 inferred from `numel` (upstream's infer_size).
std::vector<std::int64_t> infer_size(std::int64_t numel, std::vector<std::int64_t> shape, std::string_view op) {
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      STRATA_CHECK(infer == -1, op, ": only one dimension can be inferred");
      infer = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    STRATA_CHECK(known != 0 && numel % known == 0, op, ": shape is invalid for an input of size ", numel);
    shape[static_cast<std::size_t>(infer)] = numel / known;
  }
  return shape;
}

// Upstream's view_groups: the input and output dimensions grouped by equal products.
DimMap view_groups(const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to_in, std::string_view op) {
  std::int64_t numel = 1;
  for (std::int64_t s : from) numel *= s;
  const std::vector<std::int64_t> to = infer_size(numel, to_in, op);
  std::int64_t to_numel = 1;
  for (std::int64_t s : to) to_numel *= s;
  STRATA_CHECK(numel == to_numel, op, ": total view shape does not add up");
  std::size_t fi = 0, ti = 0;
  DimMap out;
  while (fi < from.size() || ti < to.size()) {
    std::vector<std::size_t> from_group;
    std::vector<std::int64_t> to_group;
    std::int64_t f = 1, t = 1;
    if (fi < from.size()) f = from[fi], from_group.push_back(fi++);
    if (ti < to.size()) t = to[ti], to_group.push_back(to[ti++]);
    if (f == 1 && t != 1) {
      --ti, to_group.clear();
    } else if (f != 1 && t == 1) {
      --fi, from_group.clear();
    } else {
      while (f != t) {
        STRATA_CHECK(f < t ? fi < from.size() : ti < to.size(), op, ": cannot group the dimensions of a view of ",
                     numel, " elements");
        if (f < t) f *= from[fi], from_group.push_back(fi++);
        else t *= to[ti], to_group.push_back(to[ti]), ++ti;
      }
    }
    if (to_group.empty()) continue;
    std::vector<DimSpec> dims;
    for (std::size_t d : from_group)
      if (from[d] >= 1) dims.push_back(DimSpec::input(static_cast<std::int64_t>(d)));
    const DimSpec flat = flatten(std::move(dims));
    for (std::size_t i = 0; i < to_group.size(); ++i) out.push_back(split(flat, to_group, i));
  }
  return out;
}

DimMap identity(std::int64_t ndim) {
  DimMap m;
  for (std::int64_t i = 0; i < ndim; ++i) m.push_back(DimSpec::input(i));
  return m;
}

// Upstream's expand: leading new dimensions and size-1 dimensions grown are broadcasts.
DimMap expand_map(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& shape, std::string_view op) {
  STRATA_CHECK(shape.size() >= in.size(), op, ": the shape has fewer dimensions than the tensor");
  const std::size_t pad = shape.size() - in.size();
  DimMap m;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const bool singleton = i < pad;
    const DimSpec p = singleton ? DimSpec::singleton() : DimSpec::input(static_cast<std::int64_t>(i - pad));
    const std::int64_t actual = singleton ? 1 : in[i - pad], desired = shape[i];
    if (desired == 1 || desired == -1 || desired == actual) m.push_back(p);
    else m.push_back(DimSpec{DimSpec::Kind::Broadcast, -1, {p}, {desired}, 0});
  }
  return m;
}

DimMap dim_map_of(const OpSchema& s, std::string_view kind) {
  const std::vector<std::int64_t>& in = s.spec(0).shape();
  const auto ndim = static_cast<std::int64_t>(in.size());
  const std::string& op = s.op.str();
  if (kind == "view") return view_groups(in, int_list(s, 1), op);
  if (kind == "expand") return expand_map(in, int_list(s, 1), op);
  if (kind == "unsqueeze") {
    std::int64_t d = s.value(1).to_int();
    if (d < 0) d += ndim + 1;
    STRATA_CHECK(d >= 0 && d <= ndim, op, ": dimension ", s.value(1).to_int(), " out of range for ", ndim + 1, " dimensions");
    DimMap m = identity(ndim);
    m.insert(m.begin() + d, DimSpec::singleton());
    return m;
  }
  if (kind == "permute") {
    DimMap m;
    for (std::int64_t d : int_list(s, 1)) m.push_back(DimSpec::input(normalize_dim(d, ndim)));
    return m;
  }
  if (kind == "transpose") {
    DimMap m = identity(ndim);
    std::swap(m[static_cast<std::size_t>(normalize_dim(s.value(1).to_int(), ndim))],
              m[static_cast<std::size_t>(normalize_dim(s.value(2).to_int(), ndim))]);
    return m;
  }
  // squeeze.dim (upstream's dim_squeeze): every dimension but `dim` if it has size 1.
  const std::int64_t d = normalize_dim(s.value(1).to_int(), ndim);
  DimMap m;
  for (std::int64_t i = 0; i < ndim; ++i)
    if (in[static_cast<std::size_t>(i)] > 1 || i != d) m.push_back(DimSpec::input(i));
  return m;
}

// Upstream's propagate_shape_and_sharding (without strict_view): the input placements the map can
// keep (a Shard of a dimension the map drops, flattens after the first, or splits unevenly becomes
// Replicate), and the output placements they give.
std::pair<Placements, Placements> propagate_shape_and_sharding(const Placements& src, const std::vector<std::int64_t>& shape,
                                                               const DimMap& rule, const std::vector<std::int64_t>& mesh_sizes) {
  const std::size_t mesh_ndim = mesh_sizes.size();
  std::set<std::int64_t> seen;
  auto collect = [&seen](const DimSpec& d, auto&& self) -> void {
    if (d.kind == DimSpec::Kind::Input) seen.insert(d.input_dim);
    for (const DimSpec& in : d.inputs) self(in, self);
  };
  for (const DimSpec& d : rule) collect(d, collect);
  std::vector<std::vector<bool>> shardable(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) shardable[i].assign(mesh_ndim, seen.count(static_cast<std::int64_t>(i)) != 0);

  auto sharded_on = [&src](std::int64_t input_dim) -> int {
    for (std::size_t m = 0; m < src.size(); ++m)
      if (src[m].is_shard(input_dim)) return static_cast<int>(m);
    return -1;
  };
  // The input dimension an output dimension's sharding comes from, if any.
  auto in_dim_to_shard = [&](const DimSpec& d, auto&& self) -> std::int64_t {
    switch (d.kind) {
      case DimSpec::Kind::Input: return d.input_dim;
      case DimSpec::Kind::Flatten:
        for (std::size_t i = 0; i < d.inputs.size(); ++i) {
          const std::int64_t in = d.inputs[i].input_dim;
          bool can = i == 0;
          const int m = sharded_on(in);
          if (i == 0 && m >= 0 && shape[static_cast<std::size_t>(in)] % mesh_sizes[static_cast<std::size_t>(m)] != 0) can = false;
          shardable[static_cast<std::size_t>(in)].assign(mesh_ndim, can);
        }
        return d.inputs[0].input_dim;
      case DimSpec::Kind::Split: {
        const std::int64_t in = self(d.inputs[0], self);
        if (d.split_id == 0 && in >= 0) {
          const std::int64_t out_size = d.group_shape[0];
          for (std::size_t m = 0; m < mesh_ndim; ++m) shardable[static_cast<std::size_t>(in)][m] = out_size % mesh_sizes[m] == 0;
        }
        return d.split_id == 0 ? in : -1;
      }
      default: return -1;
    }
  };
  std::vector<std::int64_t> shard_dim_map(shape.size(), -1);
  for (std::size_t o = 0; o < rule.size(); ++o) {
    const std::int64_t in = in_dim_to_shard(rule[o], in_dim_to_shard);
    if (in >= 0) shard_dim_map[static_cast<std::size_t>(in)] = static_cast<std::int64_t>(o);
  }
  Placements in_tgt, out;
  for (std::size_t m = 0; m < src.size(); ++m) {
    const Placement& p = src[m];
    const bool keep = !p.is_shard() || (p.dim() < static_cast<std::int64_t>(shape.size()) &&
                                        shardable[static_cast<std::size_t>(p.dim())][m] &&
                                        shard_dim_map[static_cast<std::size_t>(p.dim())] >= 0);
    in_tgt.push_back(keep ? p : Placement(Replicate{}));
    out.push_back(keep && p.is_shard() ? Placement(Shard{shard_dim_map[static_cast<std::size_t>(p.dim())]}) : in_tgt.back());
  }
  return {std::move(in_tgt), std::move(out)};
}

template <const char* Kind>
OpStrategy view_strategy(const OpSchema& schema) {
  const DTensorSpec& self = schema.spec(0);
  const DimMap rule = dim_map_of(schema, Kind);
  auto [in_tgt, out] = propagate_shape_and_sharding(self.placements, self.shape(), rule, self.mesh.shape());
  OpSpec spec;
  spec.input_specs.push_back(DTensorSpec{self.mesh, std::move(in_tgt), self.tensor_meta});
  spec.redistribute_cost.push_back(generate_redistribute_costs(self, spec.input_specs[0]));
  spec.output_specs.push_back(DTensorSpec{self.mesh, std::move(out), {}});
  return OpStrategy{{std::move(spec)}};
}

constexpr char kView[] = "view", kExpand[] = "expand", kUnsqueeze[] = "unsqueeze", kPermute[] = "permute",
               kTranspose[] = "transpose", kSqueeze[] = "squeeze";

}  // namespace

void register_view_strategies(ShardingPropagator& p) {
  p.register_op_strategy("aten::view", "", &view_strategy<kView>);
  p.register_op_strategy("aten::_unsafe_view", "", &view_strategy<kView>);
  p.register_op_strategy("aten::expand", "", &view_strategy<kExpand>);
  p.register_op_strategy("aten::unsqueeze", "", &view_strategy<kUnsqueeze>);
  p.register_op_strategy("aten::permute", "", &view_strategy<kPermute>);
  p.register_op_strategy("aten::transpose", "int", &view_strategy<kTranspose>);
  p.register_op_strategy("aten::squeeze", "dim", &view_strategy<kSqueeze>);
}

}  // namespace strata::distributed
