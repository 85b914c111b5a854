// distributed/dtensor.h: DTensor (upstream's torch.distributed.tensor.DTensor, _api.py): a tensor
// laid out on a device mesh. A wrapper subclass whose payload holds this rank's local tensor and
// the DTensorSpec (mesh, placements, global shape, stride and dtype); the wrapper has the global
// shape and the local tensor's dtype. Made by distribute_tensor (a whole tensor cut into this rank's
// piece) or DTensor::from_local (this rank's piece as it is); to_local and full_tensor leave it,
// redistribute moves it to other placements. All four are autograd functions, so gradients of
// DTensors are DTensors with the placements upstream gives them. Ops on DTensors go to its handler
// (distributed/dtensor_dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "../core/interpose/checked_wrapper.h"
#include "debug_mode_hooks.h"
#include "dtensor_spec.h"

namespace strata::distributed {

class DTensor final : public TensorSubclass, public DebugModeSubclass {
 public:
  // upstream's DTensor(local_tensor, spec, requires_grad=...), the constructor the library's own
  // code uses (not the public way to make one): a wrapper of spec's global shape and stride, the
  // local tensor's dtype and device. An error if the spec has no tensor meta, its placements are not
  // one per mesh dimension, or `local` is undefined or a DTensor.
  static Tensor make(Tensor local, DTensorSpec spec, bool requires_grad);
  // The same with a spec others share (immutable): the handler wraps its results in the specs the
  // sharding cache holds, without copying a shape (Note [The DTensor hit path]).
  // `spec_hash` is spec_cache_hash(*spec) when the caller knows it (the sharding cache's outputs).
  // `checked`, when not null and of a nonzero itemsize, says spec has a tensor meta and one placement
  // per mesh dimension and is what check_wrapper_geometry returned for its geometry (the sharding
  // cache's outputs): for a local tensor whose element size is no larger, the checks are skipped
  // (Note [A wrapper of checked geometry]).
  static Tensor make(Tensor local, std::shared_ptr<const DTensorSpec> spec, bool requires_grad,
                     std::optional<std::size_t> spec_hash = std::nullopt, const CheckedGeometry* checked = nullptr);

  // upstream's DTensor.from_local (Note [from_local's global shape]).
  static Tensor from_local(const Tensor& local, const DeviceMesh& mesh, Placements placements, bool run_check = false,
                           std::optional<std::vector<std::int64_t>> shape = std::nullopt,
                           std::optional<std::vector<std::int64_t>> stride = std::nullopt);

  // The DTensor behind `t`, or null when `t` is not one. Inline: the handler asks it of every
  // argument (Note [Telling a DTensor by its exact type]).
  static const DTensor* of(const Tensor& t) {
    const TensorSubclass* s = t.subclass();  // none on an undefined tensor's sentinel
    return s && typeid(*s) == typeid(DTensor) ? static_cast<const DTensor*>(s) : nullptr;
  }

  const Tensor& local() const { return local_; }
  const DTensorSpec& spec() const { return *spec_; }
  const std::shared_ptr<const DTensorSpec>& shared_spec() const { return spec_; }
  std::size_t spec_hash() const { return spec_hash_; }  // spec_cache_hash(spec()), kept for the cache

  std::string_view type_name() const override { return {kTypeName, sizeof(kTypeName) - 1}; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;  // dtensor_dispatch.cpp
  // upstream's __tensor_flatten__: {"_local_tensor"}, with the spec and requires_grad as context.
  FlattenedTensor flatten(const Tensor& self) const override;
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  // "DTensor(local_tensor=tensor(...), device_mesh=DM(4), placements=(S(0),))"
  std::string repr(const Tensor& self) const override;

  std::string_view debug_prefix() const override { return "dt"; }
  Placements debug_placements(const Tensor&) const override { return spec_->placements; }

 private:
  DTensor(Tensor local, std::shared_ptr<const DTensorSpec> spec, std::size_t spec_hash)
      : local_(std::move(local)), spec_(std::move(spec)), spec_hash_(spec_hash) {}
  // Note [Telling a DTensor by its exact type]
  // of() runs several times per op on DTensors; a dynamic_cast to this class (a base of two) costs a
  // walk of the type info and string comparisons, and asking the payload (a virtual type_name) a
  // call. DTensor is final, so a payload is one exactly when its dynamic type is DTensor: typeid
  // reads that from the vtable, and for a DTensor the two type_infos are the same object.
  static constexpr char kTypeName[] = "DTensor";
  Tensor local_;
  std::shared_ptr<const DTensorSpec> spec_;  // never null, never changed
  std::size_t spec_hash_;
};

bool is_dtensor(const Tensor& t);
// The spec, mesh, placements and local tensor of a DTensor: an error naming `t` when it is not one.
const DTensorSpec& dtensor_spec(const Tensor& t);
const DeviceMesh& device_mesh(const Tensor& t);
const Placements& placements(const Tensor& t);

// Note [from_local's global shape]
// upstream's compute_global_tensor_info: the global shape is the local one with each sharded
// dimension multiplied by the mesh dimension's size, and every stride at least the sharded
// dimension's multiplied alike. That assumes even shards: for uneven ones (torch.chunk's cut, Note
// [Uneven shards follow torch.chunk]) pass the global shape and stride to from_local, both or neither.
// Placements with a negative Shard dimension are normalized against the local tensor's rank first.
struct GlobalTensorInfo {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
};
GlobalTensorInfo compute_global_tensor_info(const Tensor& local, const DeviceMesh& mesh, const Placements& placements);

// upstream's DTensor.to_local: the local tensor (differentiable: its gradient comes back as a DTensor
// with grad_placements, by default the DTensor's own). Without grad mode, the local tensor itself.
Tensor to_local(const Tensor& dtensor, const std::optional<Placements>& grad_placements = std::nullopt);

// upstream's distribute_tensor for a leaf tensor that every rank holds whole (as in one process per
// rank here): each Shard cuts this rank's piece as torch.chunk does (Shard._split_tensor), Replicate
// keeps the tensor; a Partial placement is refused as upstream refuses it. A rank outside the mesh
// gets an empty local tensor.
Tensor distribute_tensor(const Tensor& tensor, const DeviceMesh& mesh, Placements placements);

// upstream's DTensor.redistribute (an autograd function; the backward moves the gradient back to the
// input's placements, a Partial one becoming Replicate). Redistributing to a Partial the input does
// not already have there is refused, as upstream refuses it.
Tensor redistribute(const Tensor& dtensor, Placements placements, bool async_op = false);

// upstream's DTensor.full_tensor: redistribute to Replicate everywhere, then to_local.
Tensor full_tensor(const Tensor& dtensor, const std::optional<Placements>& grad_placements = std::nullopt);


}  // namespace strata::distributed
