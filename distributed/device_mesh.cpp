// distributed/device_mesh.cpp: building a mesh's groups (Note [A mesh's groups are made in upstream's
// order]) and answering for this rank.
#include "distributed/device_mesh.h"

#include <algorithm>
#include <set>

#include "core/shape.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"
#include "distributed/placement.h"
#include "distributed/process_group.h"

namespace strata::distributed {

struct DeviceMesh::Impl {
  std::vector<std::int64_t> shape;
  std::vector<int> ranks;
  std::vector<std::string> dim_names;
  int rank = 0;
  std::optional<std::vector<std::int64_t>> coordinate;
  std::vector<std::string> group_names;  // one per dimension; empty when this rank is not in the mesh
};

namespace {

std::string names_str(const std::vector<std::string>& names) {  // Python's tuple: ('dp', 'tp')
  std::string out = "(";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
  return out + (names.size() == 1 ? ",)" : ")");
}

// The rows upstream makes groups of for dimension `dim`: mesh.swapdims(-1, dim).reshape(-1, size(dim)).
std::vector<std::vector<int>> rows_along(const std::vector<std::int64_t>& shape, const std::vector<int>& ranks,
                                         std::size_t dim) {
  const std::size_t n = shape.size();
  std::vector<std::size_t> perm(n);  // position k of the swapped view is dimension perm[k] of the mesh
  for (std::size_t k = 0; k < n; ++k) perm[k] = k;
  std::swap(perm[dim], perm[n - 1]);
  std::vector<std::int64_t> stride(n, 1);  // the mesh's row-major strides
  for (std::size_t k = n - 1; k-- > 0;) stride[k] = stride[k + 1] * shape[k + 1];
  std::vector<std::vector<int>> rows;
  std::vector<std::int64_t> index(n, 0);  // over the swapped view, row-major
  const std::int64_t row_length = shape[dim];
  for (std::size_t e = 0; e < ranks.size(); ++e) {
    if (static_cast<std::int64_t>(e) % row_length == 0) rows.emplace_back();
    std::int64_t flat = 0;
    for (std::size_t k = 0; k < n; ++k) flat += index[k] * stride[perm[k]];
    rows.back().push_back(ranks[static_cast<std::size_t>(flat)]);
    for (std::size_t k = n; k-- > 0;) {
      if (++index[k] < shape[perm[k]]) break;
      index[k] = 0;
    }
  }
  return rows;
}

}  // namespace

DeviceMesh::DeviceMesh(std::vector<std::int64_t> shape, std::vector<int> ranks, std::vector<std::string> dim_names) {
  ProcessGroup& world = resolve_process_group("0");
  STRATA_CHECK(!shape.empty(), "DeviceMesh: the mesh must have at least one dimension");
  std::int64_t numel = 1;
  bool overflows = false;
  for (std::int64_t s : shape) {
    STRATA_CHECK(s >= 1, "DeviceMesh: every mesh dimension must be at least 1, got shape ", shape_str(shape));
    overflows = overflows || mul_overflows(numel, s, &numel);
  }
  STRATA_CHECK(!overflows && numel <= world.size(), "Mesh should not be bigger than default world size ", world.size(),
               ", but found a mesh of shape ", shape_str(shape), " (", overflows ? "more than 2^63" : std::to_string(numel),
               " ranks)!");
  if (ranks.empty())
    for (int r = 0; r < numel; ++r) ranks.push_back(r);
  STRATA_CHECK(static_cast<std::int64_t>(ranks.size()) == numel, "DeviceMesh: a mesh of shape ", shape_str(shape),
               " needs ", numel, " ranks, got ", ranks.size());
  std::vector<bool> seen(static_cast<std::size_t>(world.size()), false);
  for (int r : ranks) {
    STRATA_CHECK(r >= 0 && r < world.size(), "DeviceMesh: rank ", r, " is not a rank of the world (it has ",
                 world.size(), " ranks)");
    STRATA_CHECK(!seen[static_cast<std::size_t>(r)], "DeviceMesh cannot have duplicate values, but found rank ", r,
                 " more than once in ", shape_str(std::vector<std::int64_t>(ranks.begin(), ranks.end())));
    seen[static_cast<std::size_t>(r)] = true;
  }
  if (!dim_names.empty()) {
    STRATA_CHECK(dim_names.size() == shape.size(), "mesh_shape and mesh_dim_names should have same length! Found "
                 "len(mesh_dim_names): ", dim_names.size(), " and len(mesh_shape):", shape.size(), ".");
    STRATA_CHECK(std::set<std::string>(dim_names.begin(), dim_names.end()).size() == dim_names.size(),
                 "Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names ",
                 names_str(dim_names));
  }

  auto impl = std::make_shared<Impl>();
  impl->rank = world.rank();
  if (shape.size() == 1 && numel == world.size()) {
    impl->group_names.push_back(world.name());  // the world itself: new_group cannot repeat it
  } else {
    for (std::size_t dim = 0; dim < shape.size(); ++dim) {
      const std::string name = split_group(rows_along(shape, ranks, dim), world.name());
      if (!name.empty()) impl->group_names.push_back(name);
    }
  }
  const auto at = std::find(ranks.begin(), ranks.end(), impl->rank);
  if (at != ranks.end()) {
    std::int64_t flat = at - ranks.begin();
    std::vector<std::int64_t> coordinate(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
      coordinate[k] = flat % shape[k];
      flat /= shape[k];
    }
    impl->coordinate = std::move(coordinate);
  }
  impl->shape = std::move(shape);
  impl->ranks = std::move(ranks);
  impl->dim_names = std::move(dim_names);
  impl_ = std::move(impl);
}

int DeviceMesh::ndim() const { return static_cast<int>(impl_->shape.size()); }
const std::vector<std::int64_t>& DeviceMesh::shape() const { return impl_->shape; }
std::int64_t DeviceMesh::size() const { return static_cast<std::int64_t>(impl_->ranks.size()); }
std::int64_t DeviceMesh::size(int dim) const { return impl_->shape[static_cast<std::size_t>(dim_of(dim))]; }
const std::vector<int>& DeviceMesh::ranks() const { return impl_->ranks; }
const std::vector<std::string>& DeviceMesh::dim_names() const { return impl_->dim_names; }
int DeviceMesh::get_rank() const { return impl_->rank; }
const std::optional<std::vector<std::int64_t>>& DeviceMesh::get_coordinate() const { return impl_->coordinate; }

int DeviceMesh::dim_of(int dim) const {
  const int n = ndim();
  STRATA_CHECK(dim >= -n && dim < n, "DeviceMesh: mesh dimension ", dim, " is out of range for a mesh of ", n,
               " dimensions");
  return dim < 0 ? dim + n : dim;
}

int DeviceMesh::dim_index(std::string_view dim_name) const {
  const auto& names = impl_->dim_names;
  const auto it = std::find(names.begin(), names.end(), dim_name);
  STRATA_CHECK(it != names.end(), "Mesh dimension '", dim_name, "' does not exist. Available mesh dimensions are: "
               "mesh_dim_names=", names.empty() ? std::string("None") : names_str(names));
  return static_cast<int>(it - names.begin());
}

const std::string& DeviceMesh::group_name(int dim) const {
  const int d = dim_of(dim);
  STRATA_CHECK(impl_->coordinate.has_value(), "DeviceMesh: rank ", impl_->rank, " is not in the mesh ", short_str(),
               ", so it has no group for mesh dimension ", d);
  return impl_->group_names[static_cast<std::size_t>(d)];
}

ProcessGroup& DeviceMesh::get_group(int dim) const { return resolve_process_group(group_name(dim)); }

int DeviceMesh::get_local_rank(int dim) const { return get_group(dim).rank(); }

int DeviceMesh::get_local_rank() const {
  STRATA_CHECK(ndim() == 1, "Found the DeviceMesh have ", ndim(), " dimensions. Optional kwarg `mesh_dim` needs to be "
               "specified when device_mesh.ndim > 1.");
  return get_local_rank(0);
}

DeviceMesh DeviceMesh::slice(int dim) const {
  const int d = dim_of(dim);
  const std::string& group = group_name(d);  // checks that this rank is in the mesh
  auto impl = std::make_shared<Impl>();
  impl->shape = {impl_->shape[static_cast<std::size_t>(d)]};
  std::vector<std::int64_t> at = *impl_->coordinate;
  for (std::int64_t k = 0; k < impl->shape[0]; ++k) {
    at[static_cast<std::size_t>(d)] = k;
    std::int64_t flat = 0;
    for (std::size_t j = 0; j < at.size(); ++j) flat = flat * impl_->shape[j] + at[j];
    impl->ranks.push_back(impl_->ranks[static_cast<std::size_t>(flat)]);
  }
  if (!impl_->dim_names.empty()) impl->dim_names = {impl_->dim_names[static_cast<std::size_t>(d)]};
  impl->rank = impl_->rank;
  impl->coordinate = std::vector<std::int64_t>{(*impl_->coordinate)[static_cast<std::size_t>(d)]};
  impl->group_names = {group};
  return DeviceMesh(std::shared_ptr<const Impl>(std::move(impl)));
}

std::string DeviceMesh::short_str() const {
  std::string out = "DM(";
  for (std::size_t i = 0; i < impl_->shape.size(); ++i) out += (i ? ", " : "") + std::to_string(impl_->shape[i]);
  return out + ")";
}

std::size_t DeviceMesh::hash() const {
  std::size_t h = impl_->shape.size();
  for (std::int64_t s : impl_->shape) h = hash_mix(h, static_cast<std::size_t>(s));
  for (int r : impl_->ranks) h = hash_mix(h, static_cast<std::size_t>(r));
  return h;
}

bool operator==(const DeviceMesh& a, const DeviceMesh& b) {
  return a.impl_ == b.impl_ || (a.impl_->shape == b.impl_->shape && a.impl_->ranks == b.impl_->ranks);
}

DeviceMesh init_device_mesh(std::vector<std::int64_t> shape, std::vector<std::string> dim_names) {
  return DeviceMesh(std::move(shape), {}, std::move(dim_names));
}

}  // namespace strata::distributed
