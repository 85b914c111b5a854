// distributed/dtensor_spec.cpp: DTensorSpec's derived facts, equality, hash and printed form.
#include "distributed/dtensor_spec.h"

#include "core/util/error.h"

namespace strata::distributed {

namespace {
const TensorMeta& meta_of(const DTensorSpec& spec, const char* what) {
  STRATA_CHECK(spec.tensor_meta.has_value(), "DTensorSpec::", what, ": ", to_string(spec),
               " has no tensor meta (shape, stride and dtype are not known yet)");
  return *spec.tensor_meta;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}
}  // namespace

const std::vector<std::int64_t>& DTensorSpec::shape() const { return meta_of(*this, "shape").shape; }
const std::vector<std::int64_t>& DTensorSpec::stride() const { return meta_of(*this, "stride").stride; }
ScalarType DTensorSpec::dtype() const { return meta_of(*this, "dtype").dtype; }

std::vector<std::int64_t> DTensorSpec::num_shards_map() const {
  std::vector<std::int64_t> shards(static_cast<std::size_t>(ndim()), 1);
  for (std::size_t m = 0; m < placements.size(); ++m) {
    const Placement& p = placements[m];
    if (!p.is_shard()) continue;
    STRATA_CHECK(p.dim() >= 0 && p.dim() < ndim(), "DTensorSpec: ", to_string(*this), " shards dimension ", p.dim(),
                 " of a tensor of ", ndim(), " dimensions");
    shards[static_cast<std::size_t>(p.dim())] *= mesh.size(static_cast<int>(m));
  }
  return shards;
}

std::vector<std::int64_t> DTensorSpec::dim_map() const {
  std::vector<std::int64_t> map(static_cast<std::size_t>(ndim()), -1);
  for (std::size_t m = 0; m < placements.size(); ++m) {
    const Placement& p = placements[m];
    if (!p.is_shard()) continue;
    STRATA_CHECK(p.dim() >= 0 && p.dim() < ndim(), "DTensorSpec: ", to_string(*this), " shards dimension ", p.dim(),
                 " of a tensor of ", ndim(), " dimensions");
    std::int64_t& slot = map[static_cast<std::size_t>(p.dim())];
    STRATA_CHECK(slot == -1, "DTensorSpec::dim_map: tensor dimension ", p.dim(), " of ", to_string(*this),
                 " is sharded on several mesh dimensions, which a dim map cannot say");
    slot = static_cast<std::int64_t>(m);
  }
  return map;
}

std::vector<int> DTensorSpec::sums() const {
  std::vector<int> out;
  for (std::size_t m = 0; m < placements.size(); ++m)
    if (placements[m].is_partial()) out.push_back(static_cast<int>(m));
  return out;
}

bool DTensorSpec::is_replicated() const {
  for (const Placement& p : placements)
    if (!p.is_replicate()) return false;
  return true;
}
bool DTensorSpec::is_sharded() const {
  for (const Placement& p : placements)
    if (p.is_shard()) return true;
  return false;
}
bool DTensorSpec::is_partial() const { return !sums().empty(); }

DTensorSpec DTensorSpec::with_placements(Placements p) const { return DTensorSpec{mesh, std::move(p), tensor_meta}; }
DTensorSpec DTensorSpec::with_tensor_meta(TensorMeta m) const { return DTensorSpec{mesh, placements, std::move(m)}; }

std::size_t DTensorSpec::hash() const {
  std::size_t h = hash_mix(mesh.hash(), hash_placements(placements));
  if (!tensor_meta) return h;
  for (std::int64_t s : tensor_meta->shape) h = hash_mix(h, static_cast<std::size_t>(s));
  for (std::int64_t s : tensor_meta->stride) h = hash_mix(h, static_cast<std::size_t>(s));
  return hash_mix(h, static_cast<std::size_t>(tensor_meta->dtype));
}

bool operator==(const DTensorSpec& a, const DTensorSpec& b) {
  return a.mesh == b.mesh && a.placements == b.placements && a.tensor_meta == b.tensor_meta;
}

std::string to_string(const DTensorSpec& spec) {
  std::string out = "Spec(" + spec.mesh.short_str() + ", " + to_string(spec.placements);
  if (spec.tensor_meta)
    out += ", " + std::string(dtype_shorthand(spec.tensor_meta->dtype)) + shape_string(spec.tensor_meta->shape);
  return out + ")";
}

}  // namespace strata::distributed
