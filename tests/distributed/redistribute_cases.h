// tests/distributed/redistribute_cases.h: what the redistribution tests of both backends share: a
// known global tensor, specs, each rank's local tensor of it under a list of placements (Partial
// split into terms that reduce to the value), and the pairs of placements upstream redistributes.
#pragma once

#include <string>
#include <vector>

#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/dtensor_spec.h"
#include "distributed/redistribute.h"
#include "distributed/shard_layout.h"
#include "ops/functions.h"

namespace strata::testing {

using distributed::DTensorSpec;
using distributed::Placement;
using distributed::Placements;

// 1, 1.5, 2, ...: halves, so that the terms of a Partial add up exactly.
inline Tensor global_tensor(const std::vector<std::int64_t>& shape) {
  std::int64_t numel = 1;
  for (std::int64_t s : shape) numel *= s;
  return arange(numel, {ScalarType::Float32}).reshape(shape) * 0.5 + 1.0;
}

inline DTensorSpec spec_of(const distributed::DeviceMesh& mesh, const Placements& ps, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return DTensorSpec{mesh, ps, distributed::TensorMeta{shape, stride, ScalarType::Float32}};
}

// This rank's shard of `global` under `ps`, each Partial mesh dimension splitting the value into
// terms that its reduction gives back (sum: value / n plus offsets that add up to 0; avg: offsets
// that average to 0; max: value minus the rank's coordinate).
inline Tensor local_of(const Tensor& global, const distributed::DeviceMesh& mesh, const Placements& ps) {
  const std::vector<std::int64_t> shape(global.sizes().begin(), global.sizes().end());
  const distributed::LocalShape ls =
      distributed::compute_local_shape_and_global_offset(shape, mesh.shape(), mesh.get_coordinate(), ps);
  Tensor t = global;
  for (std::size_t d = 0; d < shape.size(); ++d)
    t = t.narrow(static_cast<std::int64_t>(d), ls.shape[d] == 0 ? 0 : ls.global_offset[d], ls.shape[d]);
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& p = ps[static_cast<std::size_t>(m)];
    if (!p.is_partial()) continue;
    const auto n = static_cast<double>(mesh.size(m));
    const auto c = static_cast<double>((*mesh.get_coordinate())[static_cast<std::size_t>(m)]);
    const double offset = (c - (n - 1) / 2) * 0.25;
    if (p.reduce_op() == distributed::ReduceOp::Sum) t = t / n + offset;
    else if (p.reduce_op() == distributed::ReduceOp::Avg) t = t + offset;
    else t = t - c;  // Max
  }
  return t.contiguous().clone();
}

inline bool has_partial(const Placements& ps) {
  for (const Placement& p : ps)
    if (p.is_partial()) return true;
  return false;
}

// Pairs upstream does not redistribute: Shard -> Partial on a mesh dimension (an error outside
// backward), and Partial(a) -> Partial(b) of different reductions (upstream leaves the terms).
inline bool supported(const Placements& src, const Placements& dst) {
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i].is_shard() && dst[i].is_partial()) return false;
    if (src[i].is_partial() && dst[i].is_partial() && src[i] != dst[i]) return false;
  }
  return true;
}

inline Placements all_replicate(const distributed::DeviceMesh& mesh) {
  return Placements(static_cast<std::size_t>(mesh.ndim()), distributed::Replicate{});
}

// Redistributes this rank's local tensor of `global` from `src` to `dst` and compares it with the
// target's shard of `global` (its shape always; its values, or for a Partial target the full tensor
// it reduces to). Returns what is wrong, or an empty string.
inline std::string redistribution_error(const distributed::DeviceMesh& mesh, const Tensor& global, const Placements& src,
                                        const Placements& dst) {
  const std::vector<std::int64_t> shape(global.sizes().begin(), global.sizes().end());
  const DTensorSpec to = spec_of(mesh, dst, shape);
  const Tensor out = distributed::redistribute_local_tensor(local_of(global, mesh, src), spec_of(mesh, src, shape), to);
  if (distributed::AsyncCollectiveTensor::of(out) != nullptr) return "the result is still an AsyncCollectiveTensor";
  const distributed::LocalShape ls =
      distributed::compute_local_shape_and_global_offset(shape, mesh.shape(), mesh.get_coordinate(), dst);
  if (out.sizes() != IntArrayRef(ls.shape)) return "local shape " + shape_str(out.sizes()) + ", expected " + shape_str(ls.shape);
  if (!has_partial(dst)) {
    const Tensor expected = local_of(global, mesh, dst);
    return out.allclose(expected) ? "" : "values " + out.str() + ", expected " + expected.str();
  }
  const Tensor full = distributed::redistribute_local_tensor(out, to, spec_of(mesh, all_replicate(mesh), shape));
  return full.allclose(global) ? "" : "full tensor " + full.str();
}

}  // namespace strata::testing
