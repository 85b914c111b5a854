// distributed/sharding_cache.cpp: the sharding propagator's per-thread cache (Note [The sharding
// cache is per thread]): the map keyed by the whole call, the identity front a repeated call takes,
// the output specs it hands out, and the two propagate entry points that read it.
#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/interpose/checked_wrapper.h"
#include "core/util/small_vector.h"
#include "distributed/process_group.h"
#include "distributed/sharding_propagation.h"

namespace strata::distributed {

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

}  // namespace strata::distributed
