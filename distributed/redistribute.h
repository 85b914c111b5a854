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

// Note [When a redistribution waits]
// Upstream's redistribute_local_tensor has waited for its collectives in two places. PR 162665's
// release (DebugMode's first, the default format's) waited once, after the last step: a step that
// takes an earlier step's async result (the chunk after a reduce_scatter) waits inside
// AsyncCollectiveTensor's handler, which DebugMode does not record, and only the last result's
// wait_tensor shows. Today's waits after every step (unless async_op): each step's wait_tensor is a
// recorded op and the next step runs on the plain tensor. RedistributeWait picks one per thread,
// AfterLastStep by default; the DTensor examples of strata-trace run the one whose format they print.
enum class RedistributeWait { AfterLastStep, AfterEachStep };
RedistributeWait redistribute_wait();  // this thread's
// Sets this thread's choice for the guard's life.
class RedistributeWaitGuard {
 public:
  explicit RedistributeWaitGuard(RedistributeWait wait);
  ~RedistributeWaitGuard();
  RedistributeWaitGuard(const RedistributeWaitGuard&) = delete;
  RedistributeWaitGuard& operator=(const RedistributeWaitGuard&) = delete;

 private:
  RedistributeWait previous_;
};

// upstream's redistribute_local_tensor: this rank's local tensor of a DTensor of spec `current`
// (which must have a tensor meta) as a local tensor of spec `target`, on the same mesh. Transforms
// per step: S -> R all_gather, R -> S chunk and clone, P -> R all_reduce, P -> S reduce_scatter,
// R -> P partition (sum divides), S(i) -> S(j) shard_dim_alltoall. Unless async_op, a result still
// wrapped as an AsyncCollectiveTensor is waited for (wait(), seen by modes) and returned plain,
// after the last step or each (Note [When a redistribution waits]).
// A rank outside the mesh gets `local` back. Errors: different meshes, placements not one per mesh
// dimension, S -> P (outside backward).
Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target,
                                 bool async_op = false);
// As above; is_backward as upstream's: R -> P keeps the replicated value (a gradient stays
// replicated) and S -> P gathers it.
Tensor redistribute_local_tensor(const Tensor& local, const DTensorSpec& current, const DTensorSpec& target, bool async_op,
                                 bool is_backward);

}  // namespace strata::distributed
