// distributed/placement_transforms.cpp: one redistribution step's local work (Note [Uneven shards
// follow torch.chunk] says how shards are cut and padded).
#include "distributed/placement_transforms.h"

#include "distributed/device_mesh.h"
#include "distributed/funcol.h"
#include "distributed/shard_dim_alltoall.h"
#include "distributed/shard_layout.h"
#include "nn/functional.h"
#include "ops/functions.h"

namespace strata::distributed {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::size_t to_index(std::int64_t dim) { return static_cast<std::size_t>(dim); }

void check_shard_dim(const Tensor& t, std::int64_t dim, const char* fn) {
  STRATA_CHECK(dim >= 0 && dim < t.dim(), "", fn, ": Shard(", dim, ") is not a dimension of the local tensor of shape ",
               shape_str(t.sizes()));
}
}  // namespace

SplitShards split_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t num_chunks, bool with_padding,
                         bool contiguous) {
  check_shard_dim(tensor, dim, "split_tensor");
  STRATA_CHECK(num_chunks >= 1, "split_tensor: num_chunks must be positive, got ", num_chunks);
  std::vector<Tensor> pieces = chunk(tensor, num_chunks, dim);
  if (static_cast<std::int64_t>(pieces.size()) < num_chunks) {  // upstream's fill_empty_tensor_to_shards
    std::vector<std::int64_t> sizes(pieces.front().sizes().begin(), pieces.front().sizes().end());
    sizes[to_index(dim)] = 0;
    const Tensor empty_shard = zeros(sizes, {tensor.dtype(), tensor.device()});
    pieces.resize(static_cast<std::size_t>(num_chunks), empty_shard);
  }
  const std::int64_t full_chunk_size = ceil_div(tensor.size(dim), num_chunks);
  SplitShards out;
  for (Tensor& shard : pieces) {
    if (with_padding) {
      const std::int64_t pad_size = full_chunk_size - shard.size(dim);
      shard = pad_tensor(shard, dim, pad_size);
      out.pad_sizes.push_back(pad_size);
    }
    if (contiguous) shard = shard.contiguous();
    out.shards.push_back(std::move(shard));
  }
  return out;
}

Tensor pad_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t pad_size) {
  if (pad_size == 0) return tensor;
  // F.pad's pad list runs from the last dimension backwards; pad_size goes after `dim`'s end.
  std::vector<std::int64_t> pad(to_index(2 * (tensor.dim() - dim)), 0);
  pad.back() = pad_size;
  return nn::functional::pad(tensor, pad);  // upstream's torch.nn.functional.pad
}

Tensor unpad_tensor(const Tensor& tensor, std::int64_t dim, std::int64_t pad_size) {
  if (pad_size == 0) return tensor;
  return tensor.narrow(dim, 0, tensor.size(dim) - pad_size);
}

Tensor shard_to_replicate(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                          const std::vector<std::int64_t>& logical_shape) {
  check_shard_dim(local, dim, "Shard -> Replicate");
  const std::int64_t num_chunks = mesh.size(mesh_dim);
  const std::int64_t logical_dim_size = logical_shape.at(to_index(dim));
  const bool is_padded = logical_dim_size % num_chunks != 0;
  const std::int64_t full_chunk_size = ceil_div(logical_dim_size, num_chunks);
  Tensor t = local;
  if (is_padded) t = pad_tensor(t, dim, full_chunk_size - t.size(dim));
  if (!t.is_contiguous()) t = t.contiguous();
  Tensor result = funcol::all_gather_tensor(t, dim, {mesh, mesh_dim});
  if (is_padded) result = unpad_tensor(result, dim, full_chunk_size * num_chunks - logical_dim_size);
  return result;
}

Tensor replicate_to_shard(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                          std::int64_t shard_index) {
  SplitShards split = split_tensor(local, dim, mesh.size(mesh_dim), false, false);
  return split.shards.at(static_cast<std::size_t>(shard_index)).clone();
}

Tensor reduce_shard_tensor(const Tensor& tensor, std::int64_t dim, const DeviceMesh& mesh, ReduceOp reduce_op,
                           int mesh_dim) {
  check_shard_dim(tensor, dim, "Partial -> Shard");
  const auto& coordinate = mesh.get_coordinate();
  if (!coordinate) return tensor;
  const std::int64_t num_chunks = mesh.size(mesh_dim);
  const bool is_padded = tensor.size(dim) % num_chunks != 0;
  Tensor t = tensor;
  std::vector<std::int64_t> pad_sizes;
  if (is_padded) {
    SplitShards split = split_tensor(tensor, dim, num_chunks, true, true);
    pad_sizes = std::move(split.pad_sizes);
    t = cat(split.shards, dim);
  } else if (!t.is_contiguous()) {
    t = t.contiguous();
  }
  Tensor output = funcol::reduce_scatter_tensor(t, reduce_op_name(reduce_op), dim, {mesh, mesh_dim});
  if (is_padded) output = unpad_tensor(output, dim, pad_sizes.at(to_index((*coordinate)[to_index(mesh_dim)])));
  return output;
}

Tensor to_new_shard_dim(const Tensor& local, std::int64_t dim, const DeviceMesh& mesh, int mesh_dim,
                        const std::vector<std::int64_t>& logical_shape, std::int64_t new_dim) {
  check_shard_dim(local, dim, "Shard -> Shard");
  check_shard_dim(local, new_dim, "Shard -> Shard");
  const auto& coordinate = mesh.get_coordinate();
  if (!coordinate) return local;
  const std::int64_t num_chunks = mesh.size(mesh_dim);
  const std::int64_t old_size = logical_shape.at(to_index(dim));
  const std::int64_t new_size = logical_shape.at(to_index(new_dim));
  const bool old_padding = old_size % num_chunks != 0;
  const bool new_padding = new_size % num_chunks != 0;
  const std::int64_t old_full = ceil_div(old_size, num_chunks);
  const std::int64_t new_full = ceil_div(new_size, num_chunks);
  Tensor t = local;
  if (old_padding) t = pad_tensor(t, dim, old_full - t.size(dim));
  if (new_padding) t = pad_tensor(t, new_dim, new_full * num_chunks - t.size(new_dim));
  if (!t.is_contiguous()) t = t.contiguous();
  Tensor out = shard_dim_alltoall(t, dim, new_dim, mesh, mesh_dim);
  if (old_padding) out = unpad_tensor(out, dim, old_full * num_chunks - old_size);
  if (new_padding) {
    const ShardSlice mine = local_shard_size_and_offset(new_size, num_chunks, (*coordinate)[to_index(mesh_dim)]);
    out = unpad_tensor(out, new_dim, new_full - mine.size);
  }
  return out;
}

Tensor partial_reduce_value(const Tensor& tensor, ReduceOp reduce_op, const DeviceMesh& mesh, int mesh_dim) {
  return funcol::all_reduce(tensor, reduce_op_name(reduce_op), {mesh, mesh_dim});
}

Tensor partial_partition_value(const Tensor& tensor, ReduceOp reduce_op, const DeviceMesh& mesh, int mesh_dim) {
  STRATA_CHECK(reduce_op != ReduceOp::Product, "Replicate to Partial(", reduce_op_name(reduce_op),
               ") conversion is not supported.");
  if (reduce_op == ReduceOp::Sum) return tensor / mesh.size(mesh_dim);
  return tensor;  // avg, min, max of equal terms
}

}  // namespace strata::distributed
