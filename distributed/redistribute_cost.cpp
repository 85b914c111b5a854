// distributed/redistribute_cost.cpp: upstream's collective cost formulas (Note [The cost model
// assumes one device per host on CPU]).
#include "distributed/redistribute_cost.h"

#include <limits>

#include "core/dtype.h"
#include "core/util/error.h"

namespace strata::distributed {

MeshTopoInfo MeshTopoInfo::build_from_mesh(const DeviceMesh& mesh, std::int64_t devices_per_host) {
  const auto ndim = static_cast<std::size_t>(mesh.ndim());
  MeshTopoInfo topo{std::vector<std::int64_t>(ndim, 1), std::vector<double>(ndim, 87.7),
                    std::vector<double>(ndim, 0.6)};
  std::int64_t total = 1;
  for (std::size_t d = ndim; d-- > 0;) {
    const std::int64_t n = mesh.size(static_cast<int>(d));
    topo.mesh_dim_devices[d] = n;
    total *= n;
    if (total > devices_per_host) {
      topo.mesh_dim_bandwidth[d] *= 0.22;
      topo.mesh_dim_latency[d] = 2.7;
    }
  }
  return topo;
}

namespace {
double ring_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim, std::int64_t hops) {
  const auto d = static_cast<std::size_t>(mesh_dim);
  const auto devices = static_cast<double>(topo.mesh_dim_devices[d]);
  const double latency = 6.6 + static_cast<double>(hops) * topo.mesh_dim_latency[d];
  const double bw = (bytes_gb * static_cast<double>(hops) / devices) / topo.mesh_dim_bandwidth[d];
  return latency + bw * 1e6;
}
}  // namespace

double allgather_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim) {
  return ring_cost(bytes_gb, topo, mesh_dim, topo.mesh_dim_devices[static_cast<std::size_t>(mesh_dim)] - 1);
}
double allreduce_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim) {
  return ring_cost(bytes_gb, topo, mesh_dim, 2 * (topo.mesh_dim_devices[static_cast<std::size_t>(mesh_dim)] - 1));
}
double reduce_scatter_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim) {
  return allgather_cost(bytes_gb, topo, mesh_dim);
}

std::int64_t spec_to_bytes(const DTensorSpec& spec) {
  std::int64_t n = 1;
  for (std::int64_t s : spec.shape()) n *= s;
  return n * static_cast<std::int64_t>(element_size(spec.dtype()));
}

double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target, std::int64_t devices_per_host) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (current.mesh != target.mesh) return inf;
  if (current.is_replicated()) return 0.0;
  STRATA_CHECK(current.placements.size() == target.placements.size(), "redistribute_cost: ", to_string(current),
               " and ", to_string(target), " have different numbers of placements");
  const MeshTopoInfo topo = MeshTopoInfo::build_from_mesh(current.mesh, devices_per_host);
  std::int64_t num_shards = 1;
  for (std::size_t m = 0; m < current.placements.size(); ++m)
    if (current.placements[m].is_shard()) num_shards *= current.mesh.size(static_cast<int>(m));
  double bytes_gb = static_cast<double>(spec_to_bytes(current)) / static_cast<double>(num_shards) / 1024 / 1024 / 1024;
  double cost = 0.0;
  for (std::size_t m = 0; m < current.placements.size(); ++m) {
    const Placement& from = current.placements[m];
    const Placement& to = target.placements[m];
    if (from == to) continue;
    const int d = static_cast<int>(m);
    const auto devices = static_cast<double>(topo.mesh_dim_devices[m]);
    if (from.is_shard() && to.is_replicate()) {
      bytes_gb *= devices;
      cost += allgather_cost(bytes_gb, topo, d);
    } else if (from.is_shard() && to.is_shard()) {
      cost += allgather_cost(bytes_gb, topo, d) + 1.0;
    } else if (from.is_partial() && to.is_replicate()) {
      cost += allreduce_cost(bytes_gb, topo, d);
    } else if (from.is_partial() && to.is_shard()) {
      cost += reduce_scatter_cost(bytes_gb, topo, d);
      bytes_gb /= devices;
    } else if (from.is_shard() && to.is_partial()) {
      return inf;
    }
  }
  return cost;
}

}  // namespace strata::distributed
