// distributed/shard_dim_alltoall.cpp: the _dtensor::shard_dim_alltoall op: its meta function (the
// output's shape, also under FakeTensorMode) and its CPU kernel, upstream's: contiguous pieces along
// shard_dim, one all-to-all over the group, the received pieces concatenated along gather_dim.
#include "distributed/shard_dim_alltoall.h"

#include <vector>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/util/checked_math.h"
#include "distributed/device_mesh.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "ops/boxing.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "ops/typed_operator.h"

namespace strata::distributed {

namespace {

struct Dims {
  std::size_t gather;
  std::size_t shard;
  std::int64_t group_size;
};

Dims check_dims(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim, std::string_view group_name) {
  const std::int64_t n = input.dim();
  STRATA_CHECK(gather_dim >= 0 && gather_dim < n && shard_dim >= 0 && shard_dim < n, "gather_dim ", gather_dim,
               " and shard_dim ", shard_dim, " must be dimensions of the input, of shape ", shape_str(input.sizes()));
  const std::int64_t group_size = resolve_process_group(group_name).size();
  STRATA_CHECK(input.size(shard_dim) % group_size == 0, "the shard_dim of the shard_dim_alltoall input (",
               input.size(shard_dim), ") is not divisible by the group size (", group_size, ")");
  return {static_cast<std::size_t>(gather_dim), static_cast<std::size_t>(shard_dim), group_size};
}

ops::TensorSpec shard_dim_alltoall_meta(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim,
                                        std::string_view group_name) {
  const Dims d = check_dims(input, gather_dim, shard_dim, group_name);
  DimVector sizes(input.sizes());
  sizes[d.shard] /= d.group_size;
  STRATA_CHECK(!mul_overflows(sizes[d.gather], d.group_size, &sizes[d.gather]), "the output's dimension ", gather_dim,
               " overflows int64");
  return ops::TensorSpec{std::move(sizes), input.dtype(), {}};
}

void shard_dim_alltoall_cpu(const Tensor& out, const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim,
                            std::string_view group_name) {
  const Dims d = check_dims(input, gather_dim, shard_dim, group_name);
  // The ops below are this kernel's own work: no mode or autograd sees them (upstream's kernel calls
  // ATen below the dispatcher's Python key, too).
  const ExcludeKeyGuard no_autograd(DispatchKey::Autograd);
  const ExcludeKeyGuard no_python(DispatchKey::Python);
  const std::int64_t length = input.size(shard_dim) / d.group_size;
  std::vector<std::int64_t> piece_sizes(input.sizes().begin(), input.sizes().end());
  piece_sizes[d.shard] = length;
  std::vector<std::int64_t> row_sizes = piece_sizes;
  row_sizes.insert(row_sizes.begin(), 1);
  std::vector<Tensor> pieces;
  for (std::int64_t i = 0; i < d.group_size; ++i) pieces.push_back(reshape(input.narrow(shard_dim, i * length, length), row_sizes));
  const Tensor send = cat(pieces, 0);
  const Tensor received = empty(send.sizes(), {send.dtype(), send.device()});
  const std::vector<std::int64_t> rows(static_cast<std::size_t>(d.group_size), 1);  // one piece to each rank
  resolve_process_group(group_name).all_to_all_single(send, received, rows, rows)->wait();
  std::vector<Tensor> got;
  for (std::int64_t i = 0; i < d.group_size; ++i) got.push_back(reshape(received.narrow(0, i, 1), piece_sizes));
  copy_(out, cat(got, gather_dim));
}

}  // namespace

void register_dtensor_ops() {
  [[maybe_unused]] static const bool registered = [] {
    register_collective_ops();
    ops::def_functional<shard_dim_alltoall_meta, shard_dim_alltoall_cpu>(
        Dispatcher::singleton(), "_dtensor",
        "shard_dim_alltoall(Tensor input, int gather_dim, int shard_dim, str group_name) -> Tensor");
    return true;
  }();
}

Tensor shard_dim_alltoall(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim,
                          std::string_view group_name) {
  static const OperatorHandle op = [] {
    register_dtensor_ops();
    return Dispatcher::singleton().find_or_throw("_dtensor::shard_dim_alltoall");
  }();
  return strata::detail::call_op(op, input, gather_dim, shard_dim, group_name);
}

Tensor shard_dim_alltoall(const Tensor& input, std::int64_t gather_dim, std::int64_t shard_dim, const DeviceMesh& mesh,
                          int mesh_dim) {
  return shard_dim_alltoall(input, gather_dim, shard_dim, mesh.group_name(mesh_dim));
}

}  // namespace strata::distributed
