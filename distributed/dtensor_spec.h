// distributed/dtensor_spec.h: what a DTensor is apart from its local data (upstream's
// torch/distributed/tensor/_dtensor_spec.py DTensorSpec and TensorMeta): the mesh, one placement
// per mesh dimension, and the global tensor's shape, strides and dtype. Sharding propagation maps
// input specs to output specs; redistribution moves a local tensor from one spec to another; the
// DTensor wrapper holds one. A value type: compared and hashed, as the propagation cache keys on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../core/dtype.h"
#include "device_mesh.h"
#include "placement.h"

namespace strata::distributed {

// The global tensor's geometry (upstream's TensorMeta).
struct TensorMeta {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  ScalarType dtype = ScalarType::Float32;
  friend bool operator==(const TensorMeta& a, const TensorMeta& b) {
    return a.shape == b.shape && a.stride == b.stride && a.dtype == b.dtype;
  }
  friend bool operator!=(const TensorMeta& a, const TensorMeta& b) { return !(a == b); }
};

// Note [A spec without tensor meta]
// Upstream builds specs without a TensorMeta while it plans (a strategy's candidate input specs) and
// fills it in once the shapes are known. As upstream's __eq__ and __hash__: two specs are equal when
// mesh and placements agree and either neither has a meta or both have equal ones; the hash covers
// the meta when there is one.
struct DTensorSpec {
  DeviceMesh mesh;
  Placements placements;
  std::optional<TensorMeta> tensor_meta;

  // An error when the spec has no tensor meta.
  const std::vector<std::int64_t>& shape() const;
  const std::vector<std::int64_t>& stride() const;
  ScalarType dtype() const;
  std::int64_t ndim() const { return static_cast<std::int64_t>(shape().size()); }
  // The number of shards of each tensor dimension (the product of the mesh sizes sharding it).
  std::vector<std::int64_t> num_shards_map() const;
  // The mesh dimension sharding each tensor dimension, -1 if none (upstream's dim_map; a tensor
  // dimension sharded on several mesh dimensions is an error there and here).
  std::vector<std::int64_t> dim_map() const;
  // The mesh dimensions that hold a Partial (upstream's sums).
  std::vector<int> sums() const;
  bool is_replicated() const;  // every placement Replicate
  bool is_sharded() const;     // some placement Shard
  bool is_partial() const;     // some placement Partial
  // This spec with other placements, or with a tensor meta (upstream's shallow copies).
  DTensorSpec with_placements(Placements p) const;
  DTensorSpec with_tensor_meta(TensorMeta m) const;

  std::size_t hash() const;
  friend bool operator==(const DTensorSpec& a, const DTensorSpec& b);
  friend bool operator!=(const DTensorSpec& a, const DTensorSpec& b) { return !(a == b); }
};

// For messages and test failures: "Spec(DM(4, 2), [S(0), R], f32[8, 32])", without a meta
// "Spec(DM(4, 2), [S(0), R])" (upstream's __str__ differs between releases; nothing parses this).
std::string to_string(const DTensorSpec& spec);

}  // namespace strata::distributed

template <>
struct std::hash<strata::distributed::DTensorSpec> {
  std::size_t operator()(const strata::distributed::DTensorSpec& s) const noexcept { return s.hash(); }
};
