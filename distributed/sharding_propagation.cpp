// distributed/sharding_propagation.cpp: the propagator (Note [Sharding propagation picks the first
// cheapest strategy], Note [The sharding cache keys on the whole call]): the table, the choice, the
// outputs' tensor meta from the meta kernels. Its per-thread cache is in sharding_cache.cpp.
#include "distributed/sharding_propagation.h"

#include <limits>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/tensor_impl.h"
#include "core/util/error.h"
#include "distributed/shard_layout.h"
#include "ops/op_table.h"

namespace strata::distributed {

// ---- tensor meta ----

namespace {
Tensor meta_tensor(const TensorMeta& m) {
  void* unused = nullptr;
  return Tensor(IntrusivePtr<TensorImpl>::make(StorageImpl::allocate_without_data(0, &unused), 0,
                                               m.shape, m.stride,
                                               m.dtype, Device::Meta));
}
TensorMeta meta_of(const Tensor& t) {
  return TensorMeta{std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()),
                    std::vector<std::int64_t>(t.strides().begin(), t.strides().end()), t.dtype()};
}
}  // namespace

std::vector<std::optional<TensorMeta>> propagate_tensor_meta(const OpSchema& schema) {
  const OperatorEntry& entry = schema.op.entry();
  STRATA_CHECK(schema.args.size() == entry.num_arguments(), schema.op.str(), ": an OpSchema of ",
               schema.args.size(), " arguments, the op takes ", entry.num_arguments());
  STRATA_CHECK(entry.resolved(DispatchKey::Meta), schema.op.str(),
               " has no Meta kernel, so sharding propagation cannot compute its output's shape");
  Stack stack;
  stack.reserve(schema.args.size());
  for (const OpArg& a : schema.args) {
    if (const auto* s = std::get_if<DTensorSpec>(&a)) {
      STRATA_CHECK(s->tensor_meta.has_value(), schema.op.str(), ": the input spec ", to_string(*s),
                   " has no tensor meta");
      stack.emplace_back(meta_tensor(*s->tensor_meta));
    } else if (const auto* l = std::get_if<std::vector<DTensorSpec>>(&a)) {
      std::vector<Tensor> list;
      for (const DTensorSpec& s2 : *l) list.push_back(meta_tensor(s2.tensor_meta.value()));
      stack.emplace_back(std::move(list));
    } else {
      stack.push_back(std::get<IValue>(a));
    }
  }
  {
    // As FakeTensorMode's kernels run: no mode sees the meta kernel or the ops it calls.
    const ExcludeKeyGuard no_modes(DispatchKey::Python);
    schema.op.redispatch(DispatchKeySet(DispatchKey::Meta), stack);
  }
  std::vector<std::optional<TensorMeta>> out;
  for (const IValue& v : stack) {
    if (v.is_tensor() && v.to_tensor().defined()) out.emplace_back(meta_of(v.to_tensor()));
    else if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) out.emplace_back(meta_of(t));
    else out.emplace_back(std::nullopt);
  }
  return out;
}

// ---- the propagator ----

void ShardingPropagator::register_op_strategy(std::string_view qualified_name, std::string_view overload,
                                              StrategyFn fn) {
  table_[ops::op(qualified_name, overload).index()] = fn;
}

bool ShardingPropagator::has_strategy(const OperatorHandle& op) const { return table_.count(op.index()) != 0; }

namespace {
// Python's costs.index(min(costs)): the first candidate of least total cost.
std::size_t select_strategy(const OpStrategy& strategy) {
  if (strategy.strategies.size() == 1) return 0;
  std::size_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < strategy.strategies.size(); ++i) {
    const double c = strategy.strategies[i].total_cost();
    if (c < best_cost) best = i, best_cost = c;
  }
  return best;
}

// View and factory ops whose shape (and stride) arguments become the local tensor's when the output
// is sharded (upstream's op_to_shape_and_stride_idx): the index of the shape, and of the stride.
struct ShapeArgs {
  std::size_t shape = 0;
  std::optional<std::size_t> stride;
};
std::optional<ShapeArgs> shape_args(const OperatorHandle& op) {
  static const OperatorHandle view = ops::op("aten::view"), unsafe_view = ops::op("aten::_unsafe_view"),
                              expand = ops::op("aten::expand"), new_empty_strided = ops::op("aten::new_empty_strided");
  if (op == view || op == unsafe_view || op == expand) return ShapeArgs{1, std::nullopt};
  if (op == new_empty_strided) return ShapeArgs{1, 2};
  return std::nullopt;
}

// Upstream's compute_local_stride: a stride larger than the sharded dimension's shrinks by the
// number of its shards.
std::vector<std::int64_t> compute_local_stride(const DTensorSpec& spec) {
  const std::vector<std::int64_t>& global = spec.stride();
  std::vector<std::int64_t> divisors(global.size(), 1);
  for (std::size_t m = 0; m < spec.placements.size(); ++m) {
    if (!spec.placements[m].is_shard()) continue;
    const auto i = static_cast<std::size_t>(spec.placements[m].dim());
    for (std::size_t j = 0; j < global.size(); ++j)
      if (global[j] > global[i]) divisors[j] *= spec.mesh.size(static_cast<int>(m));
  }
  std::vector<std::int64_t> local(global.size());
  for (std::size_t j = 0; j < global.size(); ++j) local[j] = global[j] / divisors[j];
  return local;
}
}  // namespace

OpStrategy ShardingPropagator::strategies(const OpSchema& schema) const {
  const auto it = table_.find(schema.op.index());
  if (it == table_.end()) {
    std::string inputs = schema.placements_str();
    STRATA_CHECK(false, "Operator ", schema.op.str(), " does not have a sharding strategy registered.",
                 inputs.empty() ? std::string() : " (input placements: " + inputs + ")");
  }
  OpStrategy strategy = it->second(schema);
  STRATA_CHECK(!strategy.strategies.empty(), "Sharding propagation failed on op ", schema.op.str(),
               ": no strategy fits the inputs ", schema.placements_str());
  return strategy;
}

OutputSharding ShardingPropagator::propagate_non_cached(const OpSchema& schema) const {
  // The meta kernel first, as upstream: it checks the call (shapes, dims) in the op's own words
  // before any strategy reads it.
  const std::vector<std::optional<TensorMeta>> out_meta = propagate_tensor_meta(schema);
  const OpStrategy strategy = strategies(schema);
  OutputSharding result;
  result.chosen_index = select_strategy(strategy);
  const OpSpec& chosen = strategy.strategies[result.chosen_index];

  // The spec each DTensor argument needs, with the argument's tensor meta.
  const std::vector<const DTensorSpec*> inputs = schema.args_spec();
  STRATA_CHECK(chosen.input_specs.empty() || chosen.input_specs.size() == inputs.size(), schema.op.str(),
               ": its strategy gives ", chosen.input_specs.size(), " input specs for ", inputs.size(), " DTensors");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const DTensorSpec& desired = chosen.input_specs.empty() ? chosen.output_spec() : chosen.input_specs[i];
    result.input_specs.push_back(DTensorSpec{desired.mesh, desired.placements, inputs[i]->tensor_meta});
    if (desired.placements != inputs[i]->placements) result.needs_redistribute = true;
  }

  // The outputs, each with its tensor meta; a spec given once stands for every tensor output.
  std::size_t tensor_outputs = 0;
  for (const auto& m : out_meta) tensor_outputs += m.has_value();
  STRATA_CHECK(chosen.output_specs.size() == tensor_outputs || chosen.output_specs.size() == 1, schema.op.str(),
               ": its strategy gives ", chosen.output_specs.size(), " output specs for ", tensor_outputs,
               " tensor outputs");
  std::size_t k = 0;
  for (const auto& m : out_meta) {
    if (!m) {
      result.output_specs.emplace_back(std::nullopt);
      continue;
    }
    const DTensorSpec& s = chosen.output_specs[chosen.output_specs.size() == 1 ? 0 : k++];
    result.output_specs.emplace_back(DTensorSpec{s.mesh, s.placements, *m});
  }

  // The call the local op makes: the redistributed inputs, and for a view of a sharded output its
  // local shape (upstream's _adjust_shape_and_stride_args).
  OpSchema local = schema;
  std::size_t flat = 0;
  for (OpArg& a : local.args) {
    if (auto* s = std::get_if<DTensorSpec>(&a)) *s = result.input_specs[flat++];
    else if (auto* l = std::get_if<std::vector<DTensorSpec>>(&a))
      for (DTensorSpec& s2 : *l) s2 = result.input_specs[flat++];
  }
  if (const auto idx = shape_args(schema.op); idx && !result.output_specs.empty() && result.output_specs[0] &&
                                              result.output_specs[0]->is_sharded()) {
    const DTensorSpec& out = *result.output_specs[0];
    const LocalShape ls =
        compute_local_shape_and_global_offset(out.shape(), out.mesh.shape(), out.mesh.get_coordinate(), out.placements);
    local.args[idx->shape] = IValue(IntArrayRef(ls.shape));
    if (idx->stride) local.args[*idx->stride] = IValue(IntArrayRef(compute_local_stride(out)));
    result.needs_redistribute = true;
  }
  if (result.needs_redistribute) result.redistribute_schema = std::move(local);
  return result;
}

ShardingPropagator& sharding_propagator() {
  static ShardingPropagator* const p = [] {
    auto* made = new ShardingPropagator();  // never destroyed: thread ranks may outlive static destruction
    register_default_strategies(*made);
    return made;
  }();
  return *p;
}

}  // namespace strata::distributed
