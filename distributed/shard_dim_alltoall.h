// distributed/shard_dim_alltoall.h: upstream's _dtensor::shard_dim_alltoall, the all-to-all that
// moves a tensor's sharding from one dimension to another (Shard(i) -> Shard(j)), as a dispatched op
// (torch/csrc/distributed/c10d/Functional.cpp), and _collective_utils.shard_dim_alltoall, which calls
// it on a mesh dimension's group.
#pragma once

#include <cstdint>
#include <string_view>

#include "../core/tensor.h"

namespace strata::distributed {

class DeviceMesh;

// _dtensor::shard_dim_alltoall(Tensor input, int gather_dim, int shard_dim, str group_name) -> Tensor
// Rank r cuts its input into group-size equal pieces along shard_dim, sends piece i to rank i, and
// concatenates what it receives along gather_dim in rank order. Synchronous, as upstream's (it waits
// before returning). Errors: a dimension out of range, shard_dim's size not a multiple of the group's.
Tensor shard_dim_alltoall(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim,
                          std::string_view group_name);
// upstream's _collective_utils.shard_dim_alltoall(input, gather_dim, shard_dim, mesh, mesh_dim).
Tensor shard_dim_alltoall(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim, const DeviceMesh& mesh,
                          int mesh_dim);

// Registers the _dtensor ops, once (the function above does it on first use; see
// register_collective_ops for why a program that starts threads registers first).
void register_dtensor_ops();

}  // namespace strata::distributed
