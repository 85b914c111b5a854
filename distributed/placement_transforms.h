// distributed/placement_transforms.h: the local work of one redistribution step on one mesh
// dimension, as upstream's Shard and Partial methods (torch/distributed/tensor/placement_types.py):
// each takes this rank's local tensor and returns the new one, running the functional collectives
// (funcol.h) on the mesh dimension's group. redistribute.h chains them.
#pragma once

#include <cstdint>
#include <vector>

#include "../core/tensor.h"
#include "reduce_op.h"

namespace strata::distributed {

class DeviceMesh;

// Shard._split_tensor: `tensor` cut along `dim` into num_chunks pieces as torch.chunk cuts it, empty
// pieces appended up to num_chunks (zeros of the right shape), each padded at its end to the full
// chunk size when with_padding (pad_sizes says by how much), each made contiguous when asked.
struct SplitShards {
  std::vector<Tensor> shards;
  std::vector<std::int64_t> pad_sizes;  // empty unless with_padding
};
SplitShards split_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t num_chunks, bool with_padding,
                         bool contiguous);
// upstream's pad_tensor / unpad_tensor: pad_size zeros added at the end of `dim` (F.pad),
// or narrowed off it; a pad_size of 0 returns the tensor itself.
Tensor pad_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t pad_size);
Tensor unpad_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t pad_size);

// Shard(dim)._to_replicate_tensor: pad to the full chunk size, all_gather along dim, unpad.
// `logical_shape` is the tensor's shape on this mesh dimension (before it is sharded there).
Tensor shard_to_replicate(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                          const std::vector<std::int64_t>& logical_shape);
// Shard(dim)._replicate_to_shard: this rank's chunk (shard_index) of the replicated tensor, cloned.
Tensor replicate_to_shard(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                          std::int64_t shard_index);
// Shard(dim)._reduce_shard_tensor (Partial._reduce_shard_value): reduce_scatter along dim, the
// chunks padded to equal sizes first and this rank's padding narrowed off after.
Tensor reduce_shard_tensor(const Tensor& tensor, std::int64_t dim, const DeviceMesh& mesh, ReduceOp reduce_op,
                           int mesh_dim);
// Shard(dim)._to_new_shard_dim: Shard(dim) -> Shard(new_dim) with one shard_dim_alltoall, both
// dimensions padded to multiples of the mesh dimension's size first and unpadded after.
Tensor to_new_shard_dim(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                        const std::vector<std::int64_t>& logical_shape, std::int64_t new_dim);
// Partial._reduce_value: all_reduce by the Partial's reduction.
Tensor partial_reduce_value(const Tensor& tensor, ReduceOp reduce_op, const DeviceMesh& mesh, int mesh_dim);
// Partial._partition_value (Replicate -> Partial), upstream's later rule: sum divides by the mesh
// dimension's size, avg, min and max keep the value (reducing equal terms gives it back); product
// is refused in upstream's words.
Tensor partial_partition_value(const Tensor& tensor, ReduceOp reduce_op, const DeviceMesh& mesh, int mesh_dim);

}  // namespace strata::distributed
