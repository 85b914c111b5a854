// distributed/dtensor_redistribute.cpp: DTensor::redistribute as upstream's Redistribute autograd
// function over redistribute_local_tensor (distributed/redistribute.h).
#include <string>
#include <utility>

#include "autograd/custom_function.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "core/util/error.h"
#include "distributed/dtensor.h"
#include "distributed/dtensor_autograd.h"
#include "distributed/redistribute.h"

namespace strata::distributed {

// Note [A gradient is not made Partial]
// Redistribute's backward moves the gradient back to the input's placements with upstream's
// is_backward rules (redistribute.h: where the input was Partial and the gradient is Replicate, the
// gradient stays Replicate rather than be divided, to be summed again later), and labels each
// Partial of the input's placements Replicate, as upstream's backward does.
namespace {

using autograd::AutogradContext;
using autograd::variable_list;

struct Redistribute : autograd::Function<Redistribute> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const Placements& placements, bool async_op) {
    ctx->set_materialize_grads(false);
    const DTensor& d = *DTensor::of(input);
    ctx->saved_data["spec"] = IValue(IntrusivePtr<CustomObject>(new SpecObject(d.spec())));
    ctx->saved_data["async_op"] = async_op;
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    if (d.spec().placements == placements) return DTensor::make(d.local(), d.spec(), false);
    DTensorSpec target = d.spec().with_placements(placements);
    Tensor local = redistribute_local_tensor(d.local(), d.spec(), target, async_op);
    return DTensor::make(std::move(local), std::move(target), false);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor& grad = grads[0];
    if (!grad.defined()) return {Tensor(), Tensor(), Tensor()};
    const DTensor* g = DTensor::of(grad);
    STRATA_CHECK(g != nullptr, "DTensor.redistribute's backward: the gradient of a DTensor must be a DTensor, got a ",
                 grad.subclass() ? std::string(grad.subclass()->type_name()) : std::string("plain tensor"));
    const DTensorSpec& previous = SpecObject::of(ctx->saved_data.at("spec"));
    Tensor local;
    {
      const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
      local = redistribute_local_tensor(g->local(), g->spec(), previous, ctx->saved_data.at("async_op").to_bool(),
                                        /*is_backward=*/true);
    }
    Placements placements = previous.placements;
    for (Placement& p : placements)
      if (p.is_partial()) p = Replicate{};
    TensorMeta meta{grad.sizes().vec(), grad.strides().vec(), local.dtype()};
    Tensor out = DTensor::make(std::move(local), DTensorSpec{previous.mesh, placements, std::move(meta)}, grad.requires_grad());
    return {std::move(out), Tensor(), Tensor()};
  }
};

}  // namespace

Tensor redistribute(const Tensor& dtensor, Placements placements, bool async_op) {
  const DTensorSpec& spec = dtensor_spec(dtensor);
  STRATA_CHECK(static_cast<int>(placements.size()) == spec.mesh.ndim(), "DTensor.redistribute: ", placements.size(),
               " placements ", to_string(placements), " for a mesh of ", spec.mesh.ndim(), " dimensions (",
               spec.mesh.short_str(), ")");
  for (std::size_t i = 0; i < placements.size(); ++i) {
    Placement& p = placements[i];
    STRATA_CHECK(!p.is_partial() || spec.placements[i] == p, "Can not redistribute from ", to_string(spec.placements[i]),
                 " to ", to_string(p), ", redistributing to Partial is for internal use only!");
    if (p.is_shard() && p.dim() < 0) p = Shard{p.dim() + dtensor.dim()};
    STRATA_CHECK(!p.is_shard() || p.dim() < dtensor.dim(), "DTensor.redistribute: ", repr(p), " on mesh dimension ", i,
                 " shards a dimension a ", dtensor.dim(), "-dimensional DTensor does not have");
  }
  return Redistribute::apply(dtensor, placements, async_op);
}

}  // namespace strata::distributed
