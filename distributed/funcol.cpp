// distributed/funcol.cpp: the functional collectives' front ends, upstream's op sequence around each
// _c10d_functional op.
#include "distributed/funcol.h"

#include <vector>

#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "ops/functions.h"

namespace strata::distributed::funcol {

namespace {
std::int64_t group_size_of(const Group& group) { return resolve_process_group(group.name).size(); }

std::int64_t checked_dim(const Tensor& self, std::int64_t dim, const char* what, const char* fn) {
  const std::int64_t n = self.dim();
  STRATA_CHECK(n > 0 && dim >= -n && dim < n, "", fn, ": ", what, " ", dim, " is out of range for a tensor of shape ",
               shape_str(self.sizes()));
  return dim < 0 ? dim + n : dim;
}


// Note [Fake collectives are not wrapped]
// upstream's _maybe_wrap_tensor returns wait_tensor(output) instead of a wrapper while it traces
// (_are_we_tracing: a FakeTensorMode is active, or dynamo, or a proxy mode). Strata traces with
// FakeTensorMode only, and a collective's output under it is a fake tensor, so an output that is a
// subclass tensor is waited for at once and returned as it is.
Tensor maybe_wrap_tensor(const Tensor& output) {
  if (output.subclass() != nullptr) return distributed::wait_tensor(output);
  return AsyncCollectiveTensor::wrap(output);
}
}  // namespace

Group::Group(const DeviceMesh& mesh, int mesh_dim) : name(mesh.group_name(mesh_dim)) {}

Tensor all_gather_tensor(const Tensor& self, std::int64_t gather_dim, const Group& group) {
  STRATA_CHECK(self.defined(), "all_gather_tensor: the input is undefined");
  STRATA_CHECK(self.is_contiguous(), "all_gather_tensor: the input must be contiguous, got a tensor of shape ",
               shape_str(self.sizes()), " and strides ", shape_str(self.strides()));
  gather_dim = checked_dim(self, gather_dim, "gather_dim", "all_gather_tensor");
  const std::int64_t group_size = group_size_of(group);
  Tensor res = maybe_wrap_tensor(all_gather_into_tensor(self, group_size, group.name));
  if (gather_dim != 0) {
    // cat reads the data, so upstream waits here, on the plain tensor, before chunk and cat.
    if (AsyncCollectiveTensor::of(res) != nullptr) res = AsyncCollectiveTensor::wait(res);
    res = cat(chunk(res, group_size, 0), gather_dim);
  }
  return res;
}

Tensor reduce_scatter_tensor(const Tensor& self, std::string_view reduce_op, std::int64_t scatter_dim, const Group& group) {
  STRATA_CHECK(self.defined(), "reduce_scatter_tensor: the input is undefined");
  scatter_dim = checked_dim(self, scatter_dim, "scatter_dim", "reduce_scatter_tensor");
  const std::int64_t group_size = group_size_of(group);
  STRATA_CHECK(self.size(scatter_dim) % group_size == 0, "input dimension ", scatter_dim, " (", self.size(scatter_dim),
               " must be a multiple of group_size ", group_size, ")");
  Tensor input = self;
  if (scatter_dim != 0) input = cat(chunk(self, group_size, scatter_dim), 0);
  return maybe_wrap_tensor(distributed::reduce_scatter_tensor(input, reduce_op, group_size, group.name));
}

Tensor all_reduce(const Tensor& self, std::string_view reduce_op, const Group& group) {
  STRATA_CHECK(self.defined(), "all_reduce: the input is undefined");
  return maybe_wrap_tensor(distributed::all_reduce(self, reduce_op, group.name));
}

Tensor all_to_all_single(const Tensor& self, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                         const Group& group) {
  STRATA_CHECK(self.defined(), "all_to_all_single: the input is undefined");
  std::vector<std::int64_t> outs(output_split_sizes.begin(), output_split_sizes.end());
  std::vector<std::int64_t> ins(input_split_sizes.begin(), input_split_sizes.end());
  if (outs.empty() || ins.empty()) {
    STRATA_CHECK(outs.empty() && ins.empty(),
                 "output_split_sizes and input_split_sizes must either be specified together or both set to None");
    STRATA_CHECK(self.dim() > 0, "all_to_all_single: the input must have at least one dimension");
    const std::int64_t group_size = group_size_of(group);
    outs.assign(static_cast<std::size_t>(group_size), self.size(0) / group_size);
    ins = outs;
  }
  return maybe_wrap_tensor(distributed::all_to_all_single(self, outs, ins, group.name));
}

Tensor wait_tensor(const Tensor& self) { return distributed::wait_tensor(self); }

}  // namespace strata::distributed::funcol
