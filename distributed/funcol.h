// distributed/funcol.h: upstream's Python-level functional collectives
// (torch/distributed/_functional_collectives.py, imported there as `funcol`): each resolves its group,
// runs the local ops upstream runs around the _c10d_functional op (chunk and cat for a dimension
// other than 0) and returns the collective's output wrapped in an AsyncCollectiveTensor
// (_maybe_wrap_tensor), which waits when first used.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "../core/util/array_ref.h"
#include "../core/tensor.h"

namespace strata::distributed {

class DeviceMesh;

namespace funcol {

// The group a collective runs on (upstream's RANK_TYPES, the forms strata has): a group's name, or a
// mesh dimension's group (upstream's (mesh, mesh_dim) tuple).
struct Group {
  Group(std::string_view group_name) : name(group_name) {}  // NOLINT: implicit, as upstream takes a str
  Group(const char* group_name) : name(group_name) {}       // NOLINT
  Group(const DeviceMesh& mesh, int mesh_dim);
  std::string name;
};

// The ranks' tensors concatenated along gather_dim. The input must be contiguous. For a gather_dim
// other than 0, upstream waits at once (wait() on the result, a dispatched wait_tensor), then
// cat(chunk(result, group_size, 0), gather_dim): the result is then a plain tensor.
Tensor all_gather_tensor(const Tensor& self, std::int64_t gather_dim, const Group& group);
// The ranks' tensors reduced by reduce_op ("sum", "avg", "max"...), this rank's slice along
// scatter_dim, whose size must be a multiple of the group's. For a scatter_dim other than 0 the input
// is first cat(chunk(self, group_size, scatter_dim)) along dim 0.
Tensor reduce_scatter_tensor(const Tensor& self, std::string_view reduce_op, std::int64_t scatter_dim, const Group& group);
Tensor all_reduce(const Tensor& self, std::string_view reduce_op, const Group& group);
// Without split sizes (both empty) the first dimension is split equally over the group.
Tensor all_to_all_single(const Tensor& self, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                         const Group& group);
// upstream's funcol.wait_tensor: the dispatched _c10d_functional::wait_tensor.
Tensor wait_tensor(const Tensor& self);

}  // namespace funcol
}  // namespace strata::distributed
