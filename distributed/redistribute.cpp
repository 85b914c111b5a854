// distributed/redistribute.cpp: the plan (Note [The order of a redistribution's steps]) and its
// execution, step by step.
#include "distributed/redistribute.h"

#include <optional>
#include <unordered_map>

#include "distributed/async_collective_tensor.h"
#include "distributed/debug_mode_hooks.h"
#include "distributed/placement_transforms.h"
#include "distributed/shard_layout.h"

namespace strata::distributed {

namespace {
std::size_t slot(std::int64_t i) { return static_cast<std::size_t>(i); }  // an index from a dimension

std::int64_t num_shards(const DTensorSpec& spec) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < spec.placements.size(); ++i)
    if (spec.placements[i].is_shard()) n *= spec.mesh.size(static_cast<int>(i));
  return n;
}

void check_spec(const DTensorSpec& spec, const char* which) {
  STRATA_CHECK(static_cast<int>(spec.placements.size()) == spec.mesh.ndim(), "redistribute: the ", which, " placements ",
               to_string(spec.placements), " are not one per dimension of the mesh ", spec.mesh.short_str());
  for (const Placement& p : spec.placements)
    if (p.is_shard())
      STRATA_CHECK(p.dim() >= 0 && p.dim() < spec.ndim(), "redistribute: the ", which, " placement ", to_string(p),
                   " is not a dimension of the tensor of shape ", shape_str(spec.shape()));
}
// Note [Plans are cached per thread]
// upstream caches _gen_transform_infos by its two specs (functools.cache): a DTensor program
// redistributes the same specs step after step. A plan also depends on this rank's coordinate
// (the logical shapes), which the spec does not hold: one thread may act as several ranks in turn
// (fake worlds), and thread ranks share a mesh value, so the key holds the coordinate too, and the
// table is per thread (no lock). It is cleared when it reaches kMaxPlans entries.
struct PlanKey {
  DTensorSpec current;
  DTensorSpec target;
  std::vector<std::int64_t> coordinate;
  friend bool operator==(const PlanKey& a, const PlanKey& b) {
    return a.current == b.current && a.target == b.target && a.coordinate == b.coordinate;
  }
};
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const noexcept {
    std::size_t h = hash_mix(k.current.hash(), k.target.hash());
    for (std::int64_t c : k.coordinate) h = hash_mix(h, std::hash<std::int64_t>{}(c));
    return h;
  }
};
constexpr std::size_t kMaxPlans = 1024;

std::vector<TransformInfo> cached_transform_infos(const DTensorSpec& current, const DTensorSpec& target,
                                                         const std::vector<std::int64_t>& coordinate) {
  thread_local std::unordered_map<PlanKey, std::vector<TransformInfo>, PlanKeyHash> plans;
  PlanKey key{current, target, coordinate};
  const auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  std::vector<TransformInfo> plan = gen_transform_infos(current, target);  // may throw: nothing cached
  if (plans.size() >= kMaxPlans) plans.clear();
  plans.emplace(std::move(key), plan);
  return plan;  // a copy: the steps may run code that redistributes (and clears the table) meanwhile
}
}  // namespace

std::vector<TransformInfo> gen_transform_infos(const DTensorSpec& current, const DTensorSpec& target) {
  const DeviceMesh& mesh = current.mesh;
  const auto& coordinate = mesh.get_coordinate();
  STRATA_CHECK(coordinate.has_value(), "gen_transform_infos: this rank (", mesh.get_rank(), ") is not in the mesh");
  check_spec(current, "current");
  check_spec(target, "target");
  std::vector<TransformInfo> infos;
  const std::vector<std::int64_t>& initial = current.shape();
  if (mesh.ndim() == 1) {
    infos.push_back({0, current.placements[0], target.placements[0], initial});
    return infos;
  }
  // The logical shape on each mesh dimension: what the shards of the dimensions before it leave.
  std::vector<std::vector<std::int64_t>> logical{initial};
  for (int i = 0; i < mesh.ndim(); ++i) {
    const Placement& src = current.placements[slot(i)];
    const std::vector<std::int64_t>& shape = logical.back();
    if (!src.is_shard()) {
      logical.push_back(shape);
    } else if (i < mesh.ndim() - 1) {
      std::vector<std::int64_t> next = shape;
      next[slot(src.dim())] = local_shard_size_and_offset(shape[slot(src.dim())], mesh.size(i), (*coordinate)[slot(i)]).size;
      logical.push_back(std::move(next));
    }
  }
  Placements placements = current.placements;
  const Placements& targets = target.placements;
  const auto add = [&](int mesh_dim, const Placement& dst) {
    infos.push_back({mesh_dim, placements[slot(mesh_dim)], dst, logical[slot(mesh_dim)]});
    placements[slot(mesh_dim)] = dst;
  };
  if (num_shards(current) > 1) {
    for (int mesh_dim = mesh.ndim() - 1; mesh_dim >= 0; --mesh_dim) {
      Placement dst = targets[slot(mesh_dim)];
      if (dst.is_shard()) {
        // Nested sharding: the dimensions before this one must shard dst's tensor dim alike.
        bool aligned = true;
        for (int i = 0; i < mesh_dim; ++i)
          aligned = aligned && placements[slot(i)].is_shard(dst.dim()) == targets[slot(i)].is_shard(dst.dim());
        if (!aligned) dst = Replicate{};
      }
      if (placements[slot(mesh_dim)] != dst) add(mesh_dim, dst);
    }
  }
  for (int mesh_dim = 0; mesh_dim < mesh.ndim(); ++mesh_dim)
    if (placements[slot(mesh_dim)] != targets[slot(mesh_dim)]) add(mesh_dim, targets[slot(mesh_dim)]);
  return infos;
}

namespace {

// The placements a plan passes through, from the source to the target (upstream's
// stringify_transform_infos), for DebugMode's record of the redistribution.
std::vector<Placements> placements_path(const Placements& start, const std::vector<TransformInfo>& plan) {
  std::vector<Placements> path{start};
  for (const TransformInfo& info : plan) {
    Placements next = path.back();
    next[slot(info.mesh_dim)] = info.dst;
    path.push_back(std::move(next));
  }
  return path;
}

thread_local RedistributeWait this_thread_wait = RedistributeWait::AfterLastStep;

}  // namespace

RedistributeWait redistribute_wait() { return this_thread_wait; }
RedistributeWaitGuard::RedistributeWaitGuard(RedistributeWait wait) : previous_(this_thread_wait) {
  this_thread_wait = wait;
}
RedistributeWaitGuard::~RedistributeWaitGuard() { this_thread_wait = previous_; }

Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target,
                                 bool async_op) {
  return redistribute_local_tensor(local, current, target, async_op, false);
}

Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target, bool async_op,
                                 bool is_backward) {
  STRATA_CHECK(current.mesh == target.mesh, "Cross device mesh comm not supported yet! (from ",
               current.mesh.short_str(), " to ", target.mesh.short_str(), ")");
  const DeviceMesh& mesh = current.mesh;
  const auto& coordinate = mesh.get_coordinate();
  if (!coordinate) return local;  // not in the mesh: its local tensor is empty
  const std::vector<TransformInfo> plan = cached_transform_infos(current, target, *coordinate);
  std::optional<RecordRedistribute> record;  // the steps and the final wait nest below it
  if (active_redistribute_listener() != nullptr) record.emplace(local, placements_path(current.placements, plan));
  Tensor t = local;
  const bool wait_each_step = !async_op && this_thread_wait == RedistributeWait::AfterEachStep;
  for (const TransformInfo& info : plan) {
    const int i = info.mesh_dim;
    const Placement& cur = info.src;
    const Placement& dst = info.dst;
    if (cur == dst) continue;
    if (dst.is_replicate()) {
      if (cur.is_partial()) t = partial_reduce_value(t, cur.reduce_op(), mesh, i);
      else t = shard_to_replicate(t, cur.dim(), mesh, i, info.logical_shape);
    } else if (dst.is_shard()) {
      if (cur.is_partial()) t = reduce_shard_tensor(t, dst.dim(), mesh, cur.reduce_op(), i);
      else if (cur.is_replicate()) t = replicate_to_shard(t, dst.dim(), mesh, i, (*coordinate)[slot(i)]);
      else t = to_new_shard_dim(t, cur.dim(), mesh, i, info.logical_shape, dst.dim());
    } else if (cur.is_replicate()) {  // -> Partial
      if (!is_backward) t = partial_partition_value(t, dst.reduce_op(), mesh, i);
    } else if (cur.is_shard()) {
      STRATA_CHECK(is_backward, "redistribute from ", to_string(cur), " to ", to_string(dst), " not supported yet");
      t = shard_to_replicate(t, cur.dim(), mesh, i, info.logical_shape);
    } else {
      // Partial(a) -> Partial(b): upstream leaves the tensor as it is.
    }
    // Note [When a redistribution waits]
    if (wait_each_step && AsyncCollectiveTensor::of(t) != nullptr) t = AsyncCollectiveTensor::wait(t);
  }
  if (!async_op && AsyncCollectiveTensor::of(t) != nullptr) t = AsyncCollectiveTensor::wait(t);
  return t;
}

}  // namespace strata::distributed
