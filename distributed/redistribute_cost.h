// distributed/redistribute_cost.h: upstream's cost model of redistribution
// (torch/distributed/tensor/_collective_utils.py: MeshTopoInfo, allgather_cost, allreduce_cost,
// reduce_scatter_cost, spec_to_bytes, redistribute_cost), with its constants, so that sharding
// propagation ranks candidate strategies as PyTorch does. Costs are in microseconds of an assumed
// ring collective; only their order matters.
#pragma once

#include <cstdint>
#include <vector>

#include "dtensor_spec.h"

namespace strata::distributed {

// Note [The cost model assumes one device per host on CPU]
// Upstream builds a mesh's topology from the devices per host of its device type
// (torch.cpu.device_count() is 1), walking the mesh dimensions from the last: once the product of
// the sizes seen exceeds the devices per host, that dimension and the ones before it are inter-host
// (bandwidth 87.7 * 0.22 GB/s, latency 2.7 us) instead of intra-host (87.7 GB/s, 0.6 us). strata's
// meshes are CPU meshes, so every dimension of size above 1 (and every one before it) is inter-host,
// as in PyTorch's CPU runs; `devices_per_host` lets a test model a GPU host.
struct MeshTopoInfo {
  std::vector<std::int64_t> mesh_dim_devices;
  std::vector<double> mesh_dim_bandwidth;  // GB/s
  std::vector<double> mesh_dim_latency;    // us

  static MeshTopoInfo build_from_mesh(const DeviceMesh& mesh, std::int64_t devices_per_host = 1);
};

// A ring collective's cost on `mesh_dim` for `bytes_gb` GiB (upstream's formulas: 6.6 us base
// latency plus a hop latency per hop, plus the bytes each device sends over the bandwidth).
double allgather_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim);
double allreduce_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim);
double reduce_scatter_cost(double bytes_gb, const MeshTopoInfo& topo, int mesh_dim);

// The global tensor's bytes (upstream's spec_to_bytes); the spec needs its tensor meta.
std::int64_t spec_to_bytes(const DTensorSpec& spec);

// The cost of moving a tensor from `current` to `target` (same tensor, target's meta not needed):
// infinite across meshes or from Shard to Partial, 0 from all-Replicate, else the sum over mesh
// dimensions of all_gather (S->R), all_gather + 1 (S->S, upstream's all-to-all penalty),
// all_reduce (P->R) and reduce_scatter (P->S, which divides the bytes after it); R->S and R->P are free.
double redistribute_cost(const DTensorSpec& current, const DTensorSpec& target,
                         std::int64_t devices_per_host = 1);

}  // namespace strata::distributed
