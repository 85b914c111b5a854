// distributed/redistribute.h: moving a DTensor's local tensor from one spec to another on the same
// mesh (upstream's torch/distributed/tensor/_redistribute.py): a plan of one step per mesh dimension
// that changes (_gen_transform_infos), each step a collective or a local op
// (placement_transforms.h).
#pragma once

#include <cstdint>
#include <vector>

#include "../core/tensor.h"
#include "dtensor_spec.h"

namespace strata::distributed {

// One step of a plan (upstream's _TransformInfo): on mesh dimension mesh_dim, from `src` to `dst`,
// with the tensor's logical shape on that mesh dimension (what the shards of the dimensions before
// it leave; it sizes the padding of uneven shards).
struct TransformInfo {
  int mesh_dim = 0;
  Placement src;
  Placement dst;
  std::vector<std::int64_t> logical_shape;
};

// Note [The order of a redistribution's steps]
// As upstream's greedy planner: on a 1-D mesh, one step. Otherwise, when the source shards the
// tensor on more than one mesh dimension in all, the mesh dimensions are first walked from the last
// to the first, and a dimension whose target is Shard(d) while the dimensions before it shard d
// differently in source and target (nested sharding out of order: [S(0), S(0)] -> [R, S(0)]) is
// replicated first; then the dimensions are walked from the first to the last, each moved to its
// target. Steps whose source and target agree are left out. The logical shapes come from this
// rank's coordinate, so the plan is per rank.
std::vector<TransformInfo> gen_transform_infos(const DTensorSpec& current, const DTensorSpec& target);

// upstream's redistribute_local_tensor: this rank's local tensor of a DTensor of spec `current`
// (which must have a tensor meta) as a local tensor of spec `target`, on the same mesh. Transforms
// per step: S -> R all_gather, R -> S chunk and clone, P -> R all_reduce, P -> S reduce_scatter,
// R -> P partition (sum divides), S(i) -> S(j) shard_dim_alltoall. Unless async_op, a result still
// wrapped as an AsyncCollectiveTensor is waited for (wait(), seen by modes) and returned plain.
// A rank outside the mesh gets `local` back. Errors: different meshes, placements not one per mesh
// dimension, S -> P (outside backward).
Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target,
                                 bool async_op = false);
// As above; is_backward as upstream's: R -> P keeps the replicated value (a gradient stays
// replicated) and S -> P gathers it.
Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target, bool async_op,
                                 bool is_backward);

}  // namespace strata::distributed
