// distributed/shard_layout.cpp: shard sizes and offsets (Note [Uneven shards follow torch.chunk]).
#include "distributed/shard_layout.h"

#include <algorithm>

#include "core/util/error.h"

namespace strata::distributed {

ShardSlice local_shard_size_and_offset(std::int64_t size, std::int64_t num_chunks, std::int64_t rank) {
  STRATA_CHECK(num_chunks >= 1, "local_shard_size_and_offset: num_chunks must be positive, got ", num_chunks);
  STRATA_CHECK(rank >= 0 && rank < num_chunks, "local_shard_size_and_offset: rank ", rank, " is not in [0, ", num_chunks,
               ")");
  STRATA_CHECK(size >= 0, "local_shard_size_and_offset: the size must not be negative, got ", size);
  if (size % num_chunks == 0) return {size / num_chunks, size / num_chunks * rank};
  const std::int64_t full = size / num_chunks + 1;  // ceil: size is not a multiple
  const std::int64_t start = full * rank;
  if (size < start) return {0, size};
  return {std::min(size, start + full) - start, start};
}

ShardSplit split_with_padding(std::int64_t size, std::int64_t num_chunks) {
  STRATA_CHECK(num_chunks >= 1, "split_with_padding: num_chunks must be positive, got ", num_chunks);
  STRATA_CHECK(size >= 0, "split_with_padding: the size must not be negative, got ", size);
  ShardSplit split;
  split.full_chunk_size = (size + num_chunks - 1) / num_chunks;
  // torch.chunk: pieces of full_chunk_size while elements remain (the last one shorter), then the
  // empty shards _split_tensor appends (fill_empty_tensor_to_shards) up to num_chunks.
  std::int64_t left = size;
  for (std::int64_t i = 0; i < num_chunks; ++i) {
    const std::int64_t piece = std::min(left, split.full_chunk_size);
    left -= piece;
    split.sizes.push_back(piece);
    split.pads.push_back(split.full_chunk_size - piece);
  }
  return split;
}

LocalShape compute_local_shape_and_global_offset(const std::vector<std::int64_t>& global_shape,
                                                 const std::vector<std::int64_t>& mesh_shape,
                                                 const std::optional<std::vector<std::int64_t>>& coordinate,
                                                 const Placements& placements) {
  if (!coordinate) return {{0}, {}};
  STRATA_CHECK(placements.size() == mesh_shape.size() && coordinate->size() == mesh_shape.size(),
               "compute_local_shape_and_global_offset: ", placements.size(), " placements and a coordinate of ",
               coordinate->size(), " for a mesh of ", mesh_shape.size(), " dimensions (expected one per mesh dimension)");
  LocalShape out{global_shape, std::vector<std::int64_t>(global_shape.size(), 0)};
  for (std::size_t mesh_dim = 0; mesh_dim < placements.size(); ++mesh_dim) {
    const Placement& p = placements[mesh_dim];
    if (!p.is_shard()) continue;
    const std::int64_t dim = p.dim();
    STRATA_CHECK(dim >= 0 && dim < static_cast<std::int64_t>(global_shape.size()), "Sharding dim ", dim,
                 " greater than tensor ndim ", global_shape.size());
    const auto d = static_cast<std::size_t>(dim);
    const ShardSlice slice =
        local_shard_size_and_offset(out.shape[d], mesh_shape[mesh_dim], (*coordinate)[mesh_dim]);
    out.shape[d] = slice.size;
    // Upstream's rule: an empty shard's offset is the dimension's global size (past every real
    // shard); otherwise a dimension sharded again adds the new offset to what it had.
    if (slice.size == 0) {
      out.global_offset[d] = global_shape[d];
    } else if (out.global_offset[d] <= slice.offset) {
      out.global_offset[d] = slice.offset;
    } else {
      out.global_offset[d] += slice.offset;
    }
  }
  return out;
}

}  // namespace strata::distributed
