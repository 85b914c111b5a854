// distributed/dtensor.cpp: the DTensor payload (making one, flatten, repr, DebugMode's name), its
// accessors, the global shape of a local tensor, and distribute_tensor. The autograd functions
// (from_local, to_local, redistribute) are in dtensor_autograd.cpp, the op handler in
// dtensor_dispatch.cpp.
#include "distributed/dtensor.h"

#include <memory>

#include "autograd/variable.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "core/interpose/checked_wrapper.h"
#include "core/shape.h"
#include "core/util/error.h"
#include "distributed/shard_layout.h"
#include "distributed/sharding_propagation.h"
#include "ops/functions.h"

namespace strata::distributed {

namespace {

std::string placements_tuple(const Placements& ps) {  // Python's tuple repr: "(S(0),)", "(S(0), R)"
  std::string out = "(";
  for (std::size_t i = 0; i < ps.size(); ++i) out += (i > 0 ? ", " : "") + to_string(ps[i]);
  return out + (ps.size() == 1 ? ",)" : ")");
}

// What unflatten needs besides the local tensor (upstream's flatten spec: (spec, requires_grad)).
struct FlattenContext {
  DTensorSpec spec;
  bool requires_grad = false;
};

}  // namespace

Tensor DTensor::make(Tensor local, DTensorSpec spec, bool requires_grad) {
  return make(std::move(local), std::make_shared<const DTensorSpec>(std::move(spec)), requires_grad);
}

Tensor DTensor::make(Tensor local, std::shared_ptr<const DTensorSpec> spec, bool requires_grad,
                     std::optional<std::size_t> spec_hash, const CheckedGeometry* checked) {
  STRATA_CHECK(spec != nullptr, "DTensor: the spec is null");
  STRATA_CHECK(local.defined(), "DTensor: the local tensor is undefined");
  STRATA_CHECK(!of(local), "DTensor: the local tensor of a DTensor cannot be a DTensor");
  if (checked && checked->itemsize != 0 && element_size(local.dtype()) <= checked->itemsize && spec_hash) {
    // Note [A wrapper of checked geometry]: the cache checked this spec's meta, placements and
    // geometry once, for an element size no smaller than this one.
    const TensorMeta& meta = *spec->tensor_meta;
    const ScalarType dtype = local.dtype();
    const Device device = local.device();
    auto payload = IntrusivePtr<TensorSubclass>::adopt(new DTensor(std::move(local), std::move(spec), *spec_hash));
    Tensor out = make_checked_wrapper_tensor(std::move(payload), meta.shape, meta.stride, *checked, dtype, device);
    if (requires_grad) requires_grad_(out);
    return out;
  }
  STRATA_CHECK(spec->tensor_meta.has_value(), "DTensor: TensorMeta should not be None! (", to_string(*spec), ")");
  STRATA_CHECK(static_cast<int>(spec->placements.size()) == spec->mesh.ndim(), "DTensor: ", to_string(*spec), " has ",
               spec->placements.size(), " placements for a mesh of ", spec->mesh.ndim(), " dimensions");
  const TensorMeta& meta = *spec->tensor_meta;  // lives as long as the payload, which owns a share
  const ScalarType dtype = local.dtype();
  const Device device = local.device();
  const std::size_t hash = spec_hash ? *spec_hash : spec_cache_hash(*spec);
  auto payload = IntrusivePtr<TensorSubclass>::adopt(new DTensor(std::move(local), std::move(spec), hash));
  Tensor out = make_wrapper_tensor(std::move(payload), meta.shape, meta.stride, 0, dtype, device);
  if (requires_grad) requires_grad_(out);
  return out;
}

FlattenedTensor DTensor::flatten(const Tensor& self) const {
  auto context = std::make_shared<const FlattenContext>(FlattenContext{*spec_, self.requires_grad()});
  return FlattenedTensor{{"_local_tensor"}, {local_}, std::move(context)};
}

Tensor DTensor::unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const {
  STRATA_CHECK(flat.inner.size() == 1, "DTensor unflattens from one inner tensor (_local_tensor), got ", flat.inner.size());
  STRATA_CHECK(flat.context != nullptr, "Expecting spec to be not None from `__tensor_flatten__` return value!");
  const auto& context = *static_cast<const FlattenContext*>(flat.context.get());
  TensorMeta meta{outer_size.vec(), outer_stride.vec(), context.spec.dtype()};
  return make(flat.inner[0], context.spec.with_tensor_meta(std::move(meta)), context.requires_grad);
}

std::string DTensor::repr(const Tensor&) const {
  return "DTensor(local_tensor=" + local_.str() + ", device_mesh=" + spec_->mesh.short_str() +
         ", placements=" + placements_tuple(spec_->placements) + ")";
}

bool is_dtensor(const Tensor& t) { return DTensor::of(t) != nullptr; }

namespace {
const DTensor& dtensor_of(const Tensor& t, const char* what) {
  const DTensor* d = DTensor::of(t);
  STRATA_CHECK(d != nullptr, what, ": expected a DTensor, got ",
               !t.defined()  ? std::string("an undefined tensor")
               : t.subclass() ? std::string("a ") + std::string(t.subclass()->type_name())
                              : std::string("a plain tensor"));
  return *d;
}
}  // namespace

const DTensorSpec& dtensor_spec(const Tensor& t) { return dtensor_of(t, "dtensor_spec").spec(); }
const DeviceMesh& device_mesh(const Tensor& t) { return dtensor_of(t, "device_mesh").spec().mesh; }
const Placements& placements(const Tensor& t) { return dtensor_of(t, "placements").spec().placements; }

GlobalTensorInfo compute_global_tensor_info(const Tensor& local, const DeviceMesh& mesh, const Placements& placements) {
  GlobalTensorInfo info{local.sizes().vec(), local.strides().vec()};
  STRATA_CHECK(static_cast<int>(placements.size()) <= mesh.ndim(), "compute_global_tensor_info: ",
               placements.size(), " placements ", to_string(placements), " for a mesh of ", mesh.ndim(),
               " dimensions (", mesh.short_str(), ")");
  for (std::size_t idx = 0; idx < placements.size(); ++idx) {
    const Placement& p = placements[idx];
    if (!p.is_shard()) continue;
    const std::int64_t mesh_dim_size = mesh.size(static_cast<int>(idx));
    const std::int64_t shard_dim = p.dim();
    STRATA_CHECK(shard_dim >= 0, "Shard placements should have negative dims normalized in the user-facing APIs: ",
                 repr(p));
    STRATA_CHECK(shard_dim < local.dim(), "Sharding dim ", shard_dim, " greater than tensor ndim ", local.dim(),
                 " for placement number ", idx, ".");
    const auto d = static_cast<std::size_t>(shard_dim);
    info.shape[d] *= mesh_dim_size;
    // The strides of the dimensions outside the sharded one grow by the mesh dimension's size.
    const std::int64_t sharded_stride = info.stride[d];
    for (std::size_t i = 0; i < info.stride.size(); ++i)
      if (i != d && info.stride[i] >= sharded_stride) info.stride[i] *= mesh_dim_size;
  }
  return info;
}

Tensor distribute_tensor(const Tensor& tensor, const DeviceMesh& mesh, Placements placements) {
  STRATA_CHECK(tensor.defined(), "distribute_tensor: the tensor is undefined");
  STRATA_CHECK(static_cast<int>(placements.size()) == mesh.ndim(),
               "`placements` must have the same length as `device_mesh.ndim`! Found placements length: ",
               placements.size(), ", and device_mesh.ndim: ", mesh.ndim(), ".");
  if (const DTensor* d = DTensor::of(tensor)) {
    STRATA_CHECK(d->spec().mesh == mesh, "Cannot distribute a DTensor with device mesh ", d->spec().mesh.short_str(),
                 " to a different device mesh ", mesh.short_str(), ".");
    STRATA_CHECK(d->spec().placements == placements, "Cannot distribute a DTensor with placements ",
                 to_string(d->spec().placements), " to a different placements ", to_string(placements),
                 ". do you want to call `redistribute` instead?");
    return tensor;
  }
  STRATA_CHECK(tensor.is_leaf(),
               "`distribute_tensor` should be used to distribute leaf tensors! but found non-leaf tensor!");
  Tensor local;
  {
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // the cut is no part of any graph
    local = detach(tensor);
    const std::optional<std::vector<std::int64_t>>& coordinate = mesh.get_coordinate();
    for (std::size_t idx = 0; idx < placements.size(); ++idx) {
      Placement& p = placements[idx];
      STRATA_CHECK(!p.is_partial(), "Trying to distribute tensor with unsupported placements ", to_string(p),
                   " on device mesh dimension ", idx, "!");
      if (!p.is_shard()) continue;
      const std::int64_t dim = p.dim() < 0 ? p.dim() + tensor.dim() : p.dim();
      STRATA_CHECK(dim >= 0 && dim < tensor.dim(), "distribute_tensor: ", repr(p), " on mesh dimension ", idx,
                   " shards a dimension a tensor of shape ", shape_str(tensor.sizes()), " does not have");
      p = Shard{dim};
      if (!coordinate) continue;  // no piece for a rank outside the mesh (below)
      // Shard._split_tensor's cut (torch.chunk's pieces), this rank's piece in a buffer of its own.
      const ShardSlice s = local_shard_size_and_offset(local.sizes()[static_cast<std::size_t>(dim)],
                                                       mesh.size(static_cast<int>(idx)), (*coordinate)[idx]);
      local = clone(narrow(local, dim, s.offset, s.size), MemoryFormat::Contiguous);
    }
    if (!coordinate) local = empty({0}, TensorOptions{tensor.dtype(), tensor.device()});
  }
  if (tensor.requires_grad()) requires_grad_(local);  // as upstream's local_tensor.requires_grad_(...)
  TensorMeta meta{tensor.sizes().vec(), tensor.strides().vec(), tensor.dtype()};
  return DTensor::make(std::move(local), DTensorSpec{mesh, std::move(placements), std::move(meta)},
                       tensor.requires_grad());
}

}  // namespace strata::distributed
