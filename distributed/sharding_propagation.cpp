// distributed/sharding_propagation.cpp: the propagator (Note [Sharding propagation picks the first
// cheapest strategy], Note [The sharding cache keys on the whole call]): the table, the choice, the
// outputs' tensor meta from the meta kernels, and the per-thread cache.
#include "distributed/sharding_propagation.h"

#include <array>
#include <atomic>
#include <deque>
#include <limits>
#include <mutex>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/interpose/checked_wrapper.h"
#include "core/tensor_impl.h"
#include "core/util/error.h"
#include "core/util/small_vector.h"
#include "distributed/process_group.h"
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

// ---- the per-thread cache ----

namespace {
// Note [The sharding cache is per thread]
// As upstream's (a threading.local lru_cache): thread ranks share the propagator but each keeps its
// own cache, so a hit takes no lock, and a view's local shape (which depends on the rank's mesh
// coordinate) is never served to another rank. A cache belongs to one propagator by its id, never
// reused, so a propagator made at a freed one's address never reads the old one's entries.
std::atomic<std::uint64_t> next_propagator_id{1};
// Transparent: a borrowed call (OpCallRef) is looked up without building its OpSchema.
struct SchemaHash {
  using is_transparent = void;
  std::size_t operator()(const OpSchema& s) const { return s.hash(); }
  std::size_t operator()(const OpCallRef& c) const { return c.hash(); }
};
struct SchemaEqual {
  using is_transparent = void;
  bool operator()(const OpSchema& a, const OpSchema& b) const { return a == b; }
  bool operator()(const OpCallRef& a, const OpSchema& b) const { return a == b; }
  bool operator()(const OpSchema& a, const OpCallRef& b) const { return b == a; }
};
}  // namespace

// Note [A new world empties the caches]
// A mesh compares equal to another of the same shape and ranks (upstream's __eq__), so a key does not
// tell one world from the next on the same thread: after FakeWorld(1, 8) ends and FakeWorld(0, 8)
// begins, rank 1's entries (meshes over its groups "2" and "3", local shapes at its coordinate)
// would answer rank 0's calls, whose groups are "1" and "3". The cache remembers the thread's
// process-group epoch it was filled in and empties itself when the groups were destroyed since.
// Note [The sharding cache's identity front]
// A hit compares the call's specs with the key's by value (mesh, placements, shape, stride), as
// the key holds copies. In a loop the same spec objects come back: a DTensor's spec is shared and
// never changed, and a result's is the cache's own output spec. So in front of the map, a few slots
// (chosen by the op and the first spec's address) each remember a call that matched an entry: the
// specs it had, held shared so that no other spec can come to live at their addresses (a cached
// output spec never dies: Note [A cached output spec lives as long as the process]), and the
// entry. A call whose specs are those same objects and whose other arguments equal the key's (by
// value, as the map compares them) is that entry's, with no hash and no spec comparison. The
// invariant: a slot is written only after its call was found equal to its entry's key, and it is
// emptied whenever the map is (clear_cache, a new world), so it never points at a freed entry.
struct IdentitySlot {
  const OpSchema* key = nullptr;
  const CachedSharding* entry = nullptr;
  SmallVector<std::shared_ptr<const DTensorSpec>, 4> specs;
};
constexpr std::size_t kIdentitySlots = 64;

struct ShardingPropagator::Cache {
  std::uint64_t owner = 0;
  std::uint64_t epoch = 0;
  std::unordered_map<OpSchema, std::unique_ptr<const CachedSharding>, SchemaHash, SchemaEqual> map;
  std::array<IdentitySlot, kIdentitySlots> slots;
  std::size_t hits = 0, misses = 0;
  void clear() {
    map.clear();
    for (IdentitySlot& s : slots) s = IdentitySlot{};
  }
};

namespace {
// This thread's caches, one per propagator it used (almost always one: the process's).
std::vector<std::unique_ptr<ShardingPropagator::Cache>>& thread_caches() {
  thread_local std::vector<std::unique_ptr<ShardingPropagator::Cache>> caches;
  return caches;
}
}  // namespace

ShardingPropagator::ShardingPropagator() : id_(next_propagator_id.fetch_add(1, std::memory_order_relaxed)) {}

ShardingPropagator::~ShardingPropagator() {
  // This thread's cache goes with it; other threads' are dropped when they next look up another
  // propagator's id or end (their entries are never read again: ids are not reused).
  auto& caches = thread_caches();
  std::erase_if(caches, [this](const std::unique_ptr<Cache>& c) { return c->owner == id_; });
}

// This thread's cache for this propagator, emptied first if the thread's process groups were
// destroyed since it was filled (Note [A new world empties the caches]).
ShardingPropagator::Cache& ShardingPropagator::thread_cache() const {
  Cache& cache = owned_thread_cache();
  if (const std::uint64_t epoch = process_groups_epoch(); cache.epoch != epoch) [[unlikely]] {
    cache.clear();
    cache.epoch = epoch;
  }
  return cache;
}

ShardingPropagator::Cache& ShardingPropagator::owned_thread_cache() const {
  auto& caches = thread_caches();
  if (!caches.empty() && caches.front()->owner == id_) [[likely]] return *caches.front();
  for (auto& c : caches)
    if (c->owner == id_) return *c;
  caches.push_back(std::make_unique<Cache>());
  caches.back()->owner = id_;
  return *caches.back();
}

namespace {
// Note [A cached output spec lives as long as the process]
// Every DTensor a cache hit makes holds its output spec. A shared_ptr to it would count that with
// an atomic increment on the way in and an atomic decrement when the DTensor dies, on whichever
// thread that is. So a cached output spec is made once and never freed (the arena below is never
// destroyed, so a DTensor that outlives every static still points at a live spec), and handed out
// as a shared_ptr that owns nothing (the aliasing constructor with an empty owner): copying or
// dropping one counts nothing. A spec is plain data (its mesh holds the group names, not the
// groups), so keeping it keeps no resource alive. The arena grows by the output specs of each
// cache miss: once per distinct call per thread and world, the size the caches themselves reach.
std::shared_ptr<const DTensorSpec> lasting_spec(const DTensorSpec& spec) {
  static std::mutex mutex;
  static std::deque<DTensorSpec>& specs = *new std::deque<DTensorSpec>;  // addresses stay put
  const std::lock_guard<std::mutex> lock(mutex);
  specs.push_back(spec);
  return std::shared_ptr<const DTensorSpec>(std::shared_ptr<const void>(), &specs.back());
}

// An output spec's wrapper geometry as checked for its dtype's element size (Note [A wrapper of
// checked geometry]) when it has a tensor meta, one placement per mesh dimension and a shape a
// wrapper may have, else unchecked (DTensor::make then checks, and throws, on each wrap as before).
CheckedGeometry checked_geometry(const DTensorSpec& s) {
  if (!s.tensor_meta || static_cast<int>(s.placements.size()) != s.mesh.ndim()) return {};
  try {
    return check_wrapper_geometry(s.tensor_meta->shape, s.tensor_meta->stride, element_size(s.tensor_meta->dtype));
  } catch (const std::exception&) {  // make_wrapper_tensor's own check will say what is wrong
    return {};
  }
}
}  // namespace

const CachedSharding& ShardingPropagator::compute_and_cache(Cache& cache, OpSchema schema) const {
  auto entry = std::make_unique<CachedSharding>();
  entry->sharding = propagate_non_cached(schema);
  for (const std::optional<DTensorSpec>& s : entry->sharding.output_specs) {
    entry->outputs.push_back(s ? lasting_spec(*s) : nullptr);
    entry->output_hashes.push_back(s ? spec_cache_hash(*s) : 0);
    entry->output_checked.push_back(s ? checked_geometry(*s) : CheckedGeometry{});
  }
  ++cache.misses;
  return *cache.map.emplace(std::move(schema), std::move(entry)).first->second;
}

const OutputSharding& ShardingPropagator::propagate(const OpSchema& schema) {
  Cache& cache = thread_cache();
  if (const auto it = cache.map.find(schema); it != cache.map.end()) {
    ++cache.hits;
    return it->second->sharding;
  }
  return compute_and_cache(cache, schema).sharding;
}

namespace {
// The call's identity slot, or null when some spec is not shared (Note [The sharding cache's
// identity front]).
IdentitySlot* identity_slot(ShardingPropagator::Cache& cache, const OpCallRef& call) {
  if (call.shared == nullptr || call.num_specs == 0 || call.num_specs > 4) return nullptr;
  for (std::size_t k = 0; k < call.num_specs; ++k)
    if (call.shared[k] == nullptr) return nullptr;
  const auto first = reinterpret_cast<std::uintptr_t>(call.shared[0]->get());
  return &cache.slots[hash_mix(call.op.index(), first >> 4) % kIdentitySlots];
}

bool same_identity(const OpCallRef& call, const IdentitySlot& slot) {
  if (slot.entry == nullptr || slot.specs.size() != call.num_specs) return false;
  for (std::size_t k = 0; k < call.num_specs; ++k)
    if (call.shared[k]->get() != slot.specs[k].get()) return false;
  return call.matches(*slot.key, nullptr, nullptr);  // the specs are the same objects
}
}  // namespace

const CachedSharding& ShardingPropagator::propagate(const OpCallRef& call) {
  Cache& cache = thread_cache();
  IdentitySlot* slot = identity_slot(cache, call);
  if (slot && same_identity(call, *slot)) [[likely]] {
    ++cache.hits;
    return *slot->entry;
  }
  const OpSchema* key = nullptr;
  const CachedSharding* entry = nullptr;
  if (const auto it = cache.map.find(call); it != cache.map.end()) {
    ++cache.hits;
    key = &it->first;
    entry = it->second.get();
  } else {
    entry = &compute_and_cache(cache, call.to_schema());
    if (slot) key = &cache.map.find(call)->first;
  }
  if (slot) {  // the call equals key: remember its specs (held shared) for the next one
    slot->key = key;
    slot->entry = entry;
    slot->specs.clear();
    for (std::size_t k = 0; k < call.num_specs; ++k) slot->specs.push_back(*call.shared[k]);
  }
  return *entry;
}

ShardingPropagator::CacheStats ShardingPropagator::cache_stats() const {
  const Cache& cache = thread_cache();
  return CacheStats{cache.hits, cache.misses, cache.map.size()};
}

void ShardingPropagator::clear_cache() {
  Cache& cache = thread_cache();
  cache.clear();
  cache.hits = cache.misses = 0;
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
