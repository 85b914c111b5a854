// distributed/reducer_ops.h: the two ops upstream's DDP reducer (reducer.cpp) dispatches during a
// backward: aten::mul.out, which divides each gradient by the world size while copying it into its
// bucket, and c10d::allreduce_, ProcessGroup::allreduce's op, which reduces the flat bucket in
// place. A dispatch mode sees them as "aten.mul.out" and "c10d.allreduce_.default", as under
// PyTorch's DistributedDataParallel.
#pragma once

#include <memory>
#include <vector>

#include "../core/tensor.h"
#include "process_group.h"

namespace strata::distributed {

// aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!): self * other written
// into `out`, which must already have the broadcast shape and the result's dtype (strata does not
// resize an out= argument). Refused when self or other requires grad (upstream's out= rule).
const Tensor& mul_out(const Tensor& out, const Tensor& self, const Tensor& other);

// c10d::allreduce_(Tensor[] tensors, __torch__.torch.classes.c10d.ProcessGroup process_group,
// __torch__.torch.classes.c10d.ReduceOp reduce_op, Tensor? sparse_indices, bool async_op=True,
// int timeout=-1) -> (Tensor[], __torch__.torch.classes.c10d.Work): starts the reduction of the one
// (contiguous) tensor in place on `group` and returns its Work; the tensor holds the result once the
// Work is waited for.
std::shared_ptr<Work> allreduce_(const Tensor& tensor, ProcessGroup& group, ReduceOp op);

// Registers both ops, once (register_collective_ops calls it).
void register_reducer_ops();

}  // namespace strata::distributed
