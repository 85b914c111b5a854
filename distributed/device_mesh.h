// distributed/device_mesh.h: a device mesh (upstream's torch.distributed.device_mesh.DeviceMesh):
// the world's ranks laid out as an n-dimensional array, with one process group per mesh dimension
// holding this rank and the ranks along that dimension. DTensor placements name mesh dimensions;
// collectives on a dimension run on its group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::distributed {

class ProcessGroup;

// Note [A mesh's groups are made in upstream's order]
// Every rank of the world builds the same mesh (SPMD). For each mesh dimension in turn, the mesh is
// viewed with that dimension swapped with the last and flattened to rows of the dimension's size
// (upstream's mesh.swapdims(-1, dim).reshape(-1, size(dim))), and each row becomes a group, by
// split_group, which names groups by the counter upstream's new_group advances once per row whether
// or not this rank is in it. A (4, 2) mesh over a world of 8 thus makes "1" [0, 2, 4, 6],
// "2" [1, 3, 5, 7], then "3" [0, 1] ... "6" [6, 7], and rank 1's dimensions are "2" and "3", as in
// PyTorch. A 1-D mesh of the whole world makes no group: its dimension is the world, "0".
// A rank outside the mesh takes part in the splits and gets no coordinate and no groups.
class DeviceMesh {
 public:
  // The mesh `ranks` (row-major, of `shape`; empty for 0, 1, ..., numel - 1) over this thread's
  // world group "0" (the thread or MPI backend, or a FakeWorld), optionally with a name per
  // dimension. Errors: a dimension below 1, a rank list of the wrong length, a rank repeated or not
  // in the world, a mesh larger than the world, names repeated or not one per dimension.
  explicit DeviceMesh(std::vector<std::int64_t> shape, std::vector<int> ranks = {},
                      std::vector<std::string> dim_names = {});

  int ndim() const;
  const std::vector<std::int64_t>& shape() const;
  std::int64_t size() const;         // the number of ranks in the mesh
  std::int64_t size(int dim) const;  // along one mesh dimension (negative counts from the end)
  const std::vector<int>& ranks() const;  // row-major
  const std::vector<std::string>& dim_names() const;
  int dim_index(std::string_view dim_name) const;  // an error naming the dimension if unknown

  int get_rank() const;  // this rank in the world
  // This rank's index along each mesh dimension; none if it is not in the mesh.
  const std::optional<std::vector<std::int64_t>>& get_coordinate() const;
  // The name of dimension `dim`'s group (registered on the thread that built the mesh).
  const std::string& group_name(int dim) const;
  // That group, resolved on this thread (upstream's get_group(mesh_dim)).
  ProcessGroup& get_group(int dim) const;
  // This rank's rank in dimension `dim`'s group; without a dimension, only for a 1-D mesh.
  int get_local_rank(int dim) const;
  int get_local_rank() const;

  // upstream's mesh["tp"] for one dimension: the 1-D mesh of the ranks along `dim` through this rank
  // (a row of Note [A mesh's groups are made in upstream's order]), on that dimension's group, which
  // it shares: no group is made, so a rank may take it alone. Its dimension keeps its name. An error
  // if this rank is not in the mesh.
  DeviceMesh slice(int dim) const;
  DeviceMesh slice(std::string_view dim_name) const { return slice(dim_index(dim_name)); }

  // DebugMode's short form, "DM(4, 2)".
  std::string short_str() const;

  // Meshes are equal when their shapes and ranks are (upstream's __eq__), and hash alike then.
  std::size_t hash() const;
  friend bool operator==(const DeviceMesh& a, const DeviceMesh& b);
  friend bool operator!=(const DeviceMesh& a, const DeviceMesh& b) { return !(a == b); }

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;  // shared, immutable: a mesh is cheap to copy into a spec
  explicit DeviceMesh(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  int dim_of(int dim) const;
};

// upstream's init_device_mesh("cpu", shape, mesh_dim_names=...): ranks 0 .. numel - 1 in row-major order.
DeviceMesh init_device_mesh(std::vector<std::int64_t> shape, std::vector<std::string> dim_names = {});

}  // namespace strata::distributed

template <>
struct std::hash<strata::distributed::DeviceMesh> {
  std::size_t operator()(const strata::distributed::DeviceMesh& m) const noexcept { return m.hash(); }
};
