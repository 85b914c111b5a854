// distributed/dtensor_autograd.cpp: DTensor::from_local and to_local as the autograd functions
// upstream's _FromTorchTensor and _ToTorchTensor are (Note [Autograd between DTensor and Tensor]),
// with from_local's run_check (upstream's check_tensor_meta and mesh_broadcast), and full_tensor.
#include <string>
#include <utility>

#include "autograd/custom_function.h"
#include "autograd/grad_mode.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "core/shape.h"
#include "core/util/error.h"
#include "distributed/all_gather_object.h"
#include "distributed/dtensor.h"
#include "distributed/dtensor_autograd.h"
#include "distributed/process_group.h"
#include "distributed/redistribute.h"
#include "ops/functions.h"

namespace strata::distributed {

// Note [Autograd between DTensor and Tensor]
// As upstream's: a program may use DTensors in one part of a model only, so the conversions are
// autograd functions. to_local's backward makes the plain gradient a DTensor with the forward's
// spec (or the grad_placements asked for), its stride computed from the gradient as from_local
// computes one; from_local's backward returns the DTensor gradient's local tensor, first
// redistributed to the forward's placements when the gradient arrives with others. Their forwards
// return a fresh alias of the local tensor (upstream's view_as), since autograd writes its history
// into the tensor it returns and the DTensor keeps its own.

namespace {

using autograd::AutogradContext;
using autograd::variable_list;

std::vector<std::int64_t> vec(IntArrayRef r) { return r.vec(); }

// upstream's check_tensor_meta: every rank of the world gathers every rank's dtype and
// requires_grad (and shape and stride when asked) and compares them with its own. Through the
// world group's collectives, not the functional ops: upstream's all_gather_object is no traced op.
bool all_ranks_agree(const std::vector<std::int64_t>& mine) {
  const std::vector<std::int64_t> all = all_gather_words(resolve_process_group("0"), mine);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] != mine[i % mine.size()]) return false;
  return true;
}

void check_tensor_meta(const Tensor& local, bool check_shape_stride) {
  const std::vector<std::int64_t> head = {static_cast<std::int64_t>(local.dtype()), local.requires_grad() ? 1 : 0,
                                          check_shape_stride ? local.dim() : 0};
  bool same = all_ranks_agree(head);
  if (same && check_shape_stride) {  // the same rank everywhere: shapes and strides of one length
    std::vector<std::int64_t> geometry = vec(local.sizes());
    for (std::int64_t s : local.strides()) geometry.push_back(s);
    if (!geometry.empty()) same = all_ranks_agree(geometry);
  }
  STRATA_CHECK(same, "DTensor.from_local(run_check=True): Inconsistent tensor metadata (including shape and stride) "
               "across ranks (this rank's local tensor: ", dtype_name(local.dtype()), shape_str(local.sizes()),
               ", strides ", shape_str(local.strides()), ", requires_grad=", local.requires_grad() ? "True" : "False", ")");
}

// upstream's mesh_broadcast: the tensor of the first rank along mesh dimension `dim`, on every rank of it.
Tensor mesh_broadcast(const Tensor& t, const DeviceMesh& mesh, int dim) {
  const Tensor input = contiguous(t);
  const Tensor out = empty(input.sizes(), TensorOptions{input.dtype(), input.device()});
  mesh.get_group(dim).broadcast(input, out, 0)->wait();
  return out;
}

struct FromTorchTensor : autograd::Function<FromTorchTensor> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const DeviceMesh& mesh, const Placements& placements,
                        bool run_check, const std::optional<std::vector<std::int64_t>>& shape,
                        const std::optional<std::vector<std::int64_t>>& stride) {
    ctx->set_materialize_grads(false);
    TensorMeta meta{{}, {}, input.dtype()};
    if (shape && stride) {
      meta.shape = *shape;
      meta.stride = *stride;
    } else {
      GlobalTensorInfo info = compute_global_tensor_info(input, mesh, placements);
      meta.shape = std::move(info.shape);
      meta.stride = std::move(info.stride);
    }
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    Tensor local = input;
    if (!mesh.get_coordinate()) {
      local = empty({0}, TensorOptions{input.dtype(), input.device()});  // a rank outside the mesh holds nothing
    } else if (run_check) {
      check_tensor_meta(input, !shape && !stride);
      for (std::size_t idx = 0; idx < placements.size(); ++idx)
        if (placements[idx].is_replicate()) local = mesh_broadcast(local, mesh, static_cast<int>(idx));
    }
    DTensorSpec spec{mesh, placements, std::move(meta)};
    ctx->saved_data["spec"] = IValue(IntrusivePtr<CustomObject>(new SpecObject(spec)));
    return DTensor::make(local.view(local.sizes()), std::move(spec), false);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor& grad = grads[0];
    if (!grad.defined()) return {Tensor(), Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
    const DTensor* d = DTensor::of(grad);
    STRATA_CHECK(d != nullptr, "DTensor.from_local's backward: the gradient of a DTensor must be a DTensor, got a ",
                 grad.subclass() ? std::string(grad.subclass()->type_name()) : std::string("plain tensor"));
    const DTensorSpec& forward_spec = SpecObject::of(ctx->saved_data.at("spec"));
    if (d->spec().placements != forward_spec.placements) {
      const DTensorSpec target{forward_spec.mesh, forward_spec.placements, d->spec().tensor_meta};
      const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
      return {redistribute_local_tensor(d->local(), d->spec(), target, false, /*is_backward=*/true), Tensor(), Tensor(),
              Tensor(), Tensor(), Tensor()};
    }
    return {to_local(grad), Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

struct ToTorchTensor : autograd::Function<ToTorchTensor> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const std::optional<Placements>& grad_placements) {
    const DTensor& d = *DTensor::of(input);
    ctx->saved_data["spec"] = IValue(IntrusivePtr<CustomObject>(new SpecObject(d.spec())));
    if (grad_placements) ctx->saved_data["grad_placements"] = IValue(IntrusivePtr<CustomObject>(
                             new SpecObject(d.spec().with_placements(*grad_placements))));
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    return d.local().view(d.local().sizes());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor& grad = grads[0];
    if (!grad.defined()) return {Tensor(), Tensor()};
    const DTensorSpec& spec = SpecObject::of(ctx->saved_data.at("spec"));
    const auto asked = ctx->saved_data.find("grad_placements");
    const Placements& grad_placements =
        asked == ctx->saved_data.end() ? spec.placements : SpecObject::of(asked->second).placements;
    GlobalTensorInfo info = compute_global_tensor_info(grad, spec.mesh, spec.placements);
    TensorMeta meta{spec.shape(), std::move(info.stride), spec.dtype()};
    return {DTensor::make(grad, DTensorSpec{spec.mesh, grad_placements, std::move(meta)}, grad.requires_grad()), Tensor()};
  }
};

}  // namespace

const DTensorSpec& SpecObject::of(const IValue& v) {
  const IntrusivePtr<CustomObject> o = v.to_object();
  const auto* spec = dynamic_cast<const SpecObject*>(o.get());
  STRATA_INTERNAL_ASSERT(spec != nullptr, "a DTensor autograd context holds a ", o->type_name(), ", not a spec");
  return spec->spec;
}

Tensor DTensor::from_local(const Tensor& local, const DeviceMesh& mesh, Placements placements, bool run_check,
                           std::optional<std::vector<std::int64_t>> shape, std::optional<std::vector<std::int64_t>> stride) {
  STRATA_CHECK(local.defined(), "DTensor.from_local: the local tensor is undefined");
  STRATA_CHECK(!of(local), "DTensor.from_local: the local_tensor argument only accepts torch.Tensor but got ",
               "<class 'torch.distributed.tensor.DTensor'> value.");
  STRATA_CHECK(static_cast<int>(placements.size()) == mesh.ndim(),
               "DTensor.from_local: `placements` must have the same length as `device_mesh.ndim`! Found placements "
               "length: ", placements.size(), ", and device_mesh.ndim: ", mesh.ndim(), ".");
  for (Placement& p : placements)
    if (p.is_shard() && p.dim() < 0) p = Shard{p.dim() + local.dim()};  // normalized to the local rank
  STRATA_CHECK(shape.has_value() == stride.has_value(), "DTensor.from_local: Found shape:",
               shape ? shape_str(*shape) : std::string("None"), ", stride:", stride ? shape_str(*stride) : std::string("None"),
               ". Please pass both shape and stride at the same time.");
  if (shape)
    STRATA_CHECK(shape->size() == stride->size() && static_cast<std::int64_t>(shape->size()) == local.dim(),
                 "DTensor.from_local: shape ", shape_str(*shape), " and stride ", shape_str(*stride),
                 " must have one entry per dimension of the local tensor ", shape_str(local.sizes()));
  return FromTorchTensor::apply(local, mesh, placements, run_check, shape, stride);
}

Tensor to_local(const Tensor& dtensor, const std::optional<Placements>& grad_placements) {
  const DTensor* d = DTensor::of(dtensor);
  STRATA_CHECK(d != nullptr, "DTensor.to_local: expected a DTensor, got ",
               dtensor.defined() ? "a plain tensor" : "an undefined tensor");
  if (!autograd::is_grad_enabled()) return d->local();
  if (grad_placements)
    STRATA_CHECK(static_cast<int>(grad_placements->size()) == d->spec().mesh.ndim(), "DTensor.to_local: grad_placements ",
                 to_string(*grad_placements), " must have one placement per mesh dimension of ", d->spec().mesh.short_str());
  return ToTorchTensor::apply(dtensor, grad_placements);
}

Tensor full_tensor(const Tensor& dtensor, const std::optional<Placements>& grad_placements) {
  const DTensorSpec& spec = dtensor_spec(dtensor);
  const Tensor replicated = redistribute(dtensor, Placements(static_cast<std::size_t>(spec.mesh.ndim()), Replicate{}));
  return ToTorchTensor::apply(replicated, grad_placements);  // as upstream: an autograd function in any grad mode
}

}  // namespace strata::distributed
