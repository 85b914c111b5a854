// distributed/shard_layout.h: where a rank's shard lies in a sharded tensor (upstream's
// Shard._local_shard_size_and_offset, Shard._split_tensor's padding and
// _utils.compute_local_shape_and_global_offset), as pure functions of sizes, so that DTensor code,
// its tests and the fake process group agree on uneven shards without touching data.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "placement.h"

namespace strata::distributed {

// Note [Uneven shards follow torch.chunk]
// A dimension of size n split into k shards is cut as torch.chunk cuts it: every chunk holds
// ceil(n / k) elements except the last non-empty one, and when k chunks of that size overshoot n
// the ranks past the end get empty shards (n = 5, k = 4: 2, 2, 1, 0). Collectives need equal
// pieces, so before an all_gather or a scatter each shard is padded at its end to ceil(n / k)
// (pads 0, 0, 1, 2), and unpadded after. An empty shard's offset is n, its length 0.
struct ShardSlice {
  std::int64_t size = 0;
  std::int64_t offset = 0;
  friend bool operator==(const ShardSlice& a, const ShardSlice& b) { return a.size == b.size && a.offset == b.offset; }
};

// Shard `rank` of `num_chunks` of a dimension of `size` elements (upstream's
// _local_shard_size_and_offset). Errors for num_chunks < 1, a rank outside [0, num_chunks) or a
// negative size.
ShardSlice local_shard_size_and_offset(std::int64_t size, std::int64_t num_chunks, std::int64_t rank);

// _split_tensor's cut with padding: each of the num_chunks shards' sizes (torch.chunk's pieces, empty
// ones appended), the padding that makes each full_chunk_size long, and that size.
struct ShardSplit {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> pads;
  std::int64_t full_chunk_size = 0;
};
ShardSplit split_with_padding(std::int64_t size, std::int64_t num_chunks);

// The local shape of the shard at mesh coordinate `coordinate`, and its offset in the global tensor
// (upstream's compute_local_shape_and_global_offset): the placements applied in mesh-dimension order,
// each Shard cutting what the ones before it left. No coordinate (a rank outside the mesh): shape
// [0], no offset, as upstream.
struct LocalShape {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> global_offset;
};
LocalShape compute_local_shape_and_global_offset(const std::vector<std::int64_t>& global_shape,
                                                 const std::vector<std::int64_t>& mesh_shape,
                                                 const std::optional<std::vector<std::int64_t>>& coordinate,
                                                 const Placements& placements);

}  // namespace strata::distributed
