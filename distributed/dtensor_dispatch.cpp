// distributed/dtensor_dispatch.cpp: ops on DTensors (upstream's OpDispatcher.dispatch, _dispatch.py):
// the arguments unwrapped to specs, sharding propagation's decision, the inputs redistributed where
// it says, the op run on the local tensors, the results wrapped as DTensors of the output specs.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/shape.h"
#include "core/util/error.h"
#include "core/util/small_vector.h"
#include "distributed/debug_mode_hooks.h"
#include "distributed/dtensor.h"
#include "distributed/redistribute.h"
#include "distributed/sharding_propagation.h"
#include "ops/functions.h"

namespace strata::distributed {

namespace {

// upstream's _try_replicate_spec_for_scalar_tensor: a plain one-element tensor among DTensors is
// taken as replicated; any other plain tensor is refused.
DTensorSpec replicate_spec_for_plain(const OperatorHandle& op, const Tensor& t, const DeviceMesh& mesh) {
  STRATA_CHECK(t.numel() == 1, op.str(), ": got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
               "DTensor before calling distributed operators! (a plain tensor of shape ", shape_str(t.sizes()), ")");
  return DTensorSpec{mesh, Placements(static_cast<std::size_t>(mesh.ndim()), Replicate{}),
                     TensorMeta{t.sizes().vec(), t.strides().vec(), t.dtype()}};
}

// The leaves an argument counts for in upstream's flattened argument list (pytree's leaves): a list
// one per element, anything else one. redistribute_input's index counts them.
std::size_t leaves_of(const IValue& v) {
  if (v.is_tensor_list()) return v.to_tensor_list().size();
  if (v.tag() == IValue::Tag::IntList) return v.to_int_list().size();
  return 1;
}

// Note [The DTensor hit path]
// A repeated op on DTensors of the same specs (the common case: a training step's ops) must cost
// little beside the op on the local tensors. The handler therefore reads each DTensor's spec where
// the DTensor holds it and looks the call up in the sharding cache through an OpCallRef (the stack's
// arguments and pointers to those specs), which hashes and compares exactly as the OpSchema it
// stands for; only a miss builds that owning OpSchema. The cache keeps each decision's output specs
// shared and immutable, and a result's DTensor points at its spec instead of copying it, counting no
// reference (Note [A cached output spec lives as long as the process]). So a hit copies no spec,
// runs no meta kernel and no strategy, and allocates only what the local op and the output's
// wrapper need. The invariant: OpCallRef::hash and its comparison agree with OpSchema's for
// every call (op_schema.cpp computes both from the same per-argument parts), so a borrowed lookup
// finds exactly the entry the owning schema would. The local op's tensors are borrowed from the
// DTensors (Note [Borrowed tensor arguments]): on the caller's stack, its slots rewritten to borrow
// them, when the caller's slots are borrowed (Note [The local op runs in place]), else on a stack
// of its own while the handler leaves its arguments on the caller's stack until that call returns.
// Either way the DTensors, and with them their local tensors, outlive the local op, and a hit
// counts no reference on its way in. A call on the same spec objects as before is
// found by their addresses (Note [The sharding cache's identity front]), and a result's wrapper
// skips the geometry checks its cached spec passed once (Note [A wrapper of checked geometry]).
// What is left (strata-bench's dtensor group beside a do-nothing wrapper,
// docs/sharding-propagation.md) is mostly the interposer's and the second dispatch's share.

// The DTensor arguments, read in place: each defined tensor argument's spec (a list's per element)
// and local tensor in argument order, with its index among the flattened arguments. A plain
// one-element tensor gets a replicate spec owned here. `locals` point where the tensors live (in
// the DTensors, or the plain tensor in its stack slot), or at `redistributed` once moved.
struct Unwrapped {
  SmallVector<const DTensorSpec*, 4> specs;
  SmallVector<const std::shared_ptr<const DTensorSpec>*, 4> shared;  // a DTensor's spec, null for a plain tensor's
  SmallVector<std::size_t, 4> spec_hashes;  // spec_cache_hash of each spec
  SmallVector<const Tensor*, 4> locals;
  SmallVector<Tensor, 4> redistributed;  // one per spec, defined where the argument was moved
  SmallVector<std::size_t, 4> leaf_index;
  std::vector<std::unique_ptr<const DTensorSpec>> owned;
  const DeviceMesh* mesh = nullptr;
  bool borrowed = true;  // every tensor argument is a borrowed slot, none a list (Note [The local op runs in place])
};

// upstream's compute mesh: the first DTensor's among the arguments (a list's elements in order).
const DeviceMesh& compute_mesh(const OperatorHandle& op, const IValue* args, std::size_t n) {
  const DeviceMesh* mesh = nullptr;
  for (std::size_t i = 0; i < n && !mesh; ++i) {
    if (const DTensor* d = args[i].is_tensor() ? DTensor::of(args[i].to_tensor()) : nullptr) mesh = &d->spec().mesh;
    if (args[i].is_tensor_list())
      for (const Tensor& t : args[i].to_tensor_list())
        if (const DTensor* d = mesh ? nullptr : DTensor::of(t)) mesh = &d->spec().mesh;
  }
  STRATA_INTERNAL_ASSERT(mesh != nullptr, "the DTensor handler got ", op.str(), " without a DTensor argument");
  return *mesh;
}

void unwrap(const OperatorHandle& op, const IValue* args, std::size_t n, Unwrapped& u) {
  // The first DTensor met below gives the compute mesh, unless a plain tensor comes first (it needs
  // the mesh for its spec): the arguments are then searched for it. Either way the first DTensor's.
  const auto add = [&](const Tensor& t, std::size_t leaf) {
    u.leaf_index.push_back(leaf);
    if (const DTensor* d = DTensor::of(t)) {
      if (!u.mesh) u.mesh = &d->spec().mesh;
      STRATA_CHECK(&d->spec().mesh == u.mesh || d->spec().mesh == *u.mesh, op.str(), ": DTensor does not support cross-mesh operation on ",
                   u.mesh->short_str(), " and ", d->spec().mesh.short_str());
      u.locals.push_back(&d->local());
      u.specs.push_back(&d->spec());
      u.shared.push_back(&d->shared_spec());
      u.spec_hashes.push_back(d->spec_hash());
      return;
    }
    if (!u.mesh) u.mesh = &compute_mesh(op, args, n);
    u.locals.push_back(&t);
    u.owned.push_back(std::make_unique<const DTensorSpec>(replicate_spec_for_plain(op, t, *u.mesh)));
    u.specs.push_back(u.owned.back().get());
    u.shared.push_back(nullptr);
    u.spec_hashes.push_back(spec_cache_hash(*u.owned.back()));
  };
  std::size_t leaf = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const IValue& a = args[i];
    if (a.is_tensor() && a.to_tensor().defined()) {
      u.borrowed = u.borrowed && a.is_borrowed();
      add(a.to_tensor(), leaf);
    } else if (a.is_tensor_list()) {
      u.borrowed = false;
      for (std::size_t k = 0; k < a.to_tensor_list().size(); ++k) add(a.to_tensor_list()[k], leaf + k);
    }
    leaf += leaves_of(a);
  }
  if (!u.mesh) u.mesh = &compute_mesh(op, args, n);  // asserts: no argument was a DTensor
}

// The local call's arguments, on a stack of its own: each local tensor borrowed (Note [Borrowed
// tensor arguments]; the handler's arguments stay on the caller's stack until the call returns, so
// the DTensors holding them outlive it), a tensor list's copied, the other values moved from the
// arguments, or taken from the redistribute schema when there is one (it carries a view's local
// shape). The arguments are told apart as OpCallRef tells them (a defined tensor, a tensor list).
void push_local_args(IValue* args, std::size_t n, const OutputSharding& sharding, const Unwrapped& u, Stack& local) {
  const OpSchema* schema = sharding.redistribute_schema ? &*sharding.redistribute_schema : nullptr;
  std::size_t flat = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const IValue& a = args[i];
    if (a.is_tensor() && a.to_tensor().defined()) {
      local.emplace_back(IValue::Borrow{}, *u.locals[flat++]);
    } else if (a.is_tensor_list()) {
      std::vector<Tensor> list;
      for (std::size_t k = 0; k < a.to_tensor_list().size(); ++k) list.push_back(*u.locals[flat++]);
      local.emplace_back(std::move(list));
    } else {
      local.push_back(schema ? schema->value(i) : std::move(args[i]));
    }
  }
}

// Note [The local op runs in place]
// When every tensor argument sits in a borrowed slot (a front end's call: the caller holds each
// DTensor, and so its local tensor, until the call returns) and none is a list, the local op needs
// no stack of its own: each tensor slot is rewritten to borrow the local tensor (or its
// redistributed copy, which `u` holds until the handler returns), a changed value argument is
// replaced from the redistribute schema, and the op runs on the caller's stack, whose argument
// slots its returns then replace as the handler protocol asks. Rewriting a slot to borrow
// (IValue::set_borrowed) counts no reference (Note [Borrowed tensor arguments]). A slot the stack
// owns (a boxed caller's value, a list) may hold the only reference to its DTensor, which rewriting
// it would drop while the local op still reads the local tensor inside: those calls take
// push_local_args's stack. The local tensors' keys, read on the way, are what the dispatcher would
// read from the rewritten slots.
DispatchKeySet set_local_args(IValue* args, std::size_t n, const OutputSharding& sharding, const Unwrapped& u) {
  const OpSchema* schema = sharding.redistribute_schema ? &*sharding.redistribute_schema : nullptr;
  DispatchKeySet keys;
  std::size_t flat = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const IValue& a = args[i];  // read through a const slot: a mutable to_tensor() would own it
    if (a.is_tensor() && a.to_tensor().defined()) {
      const Tensor& local = *u.locals[flat++];
      args[i].set_borrowed(local);
      keys = keys | local.key_set();
    } else if (schema) {
      args[i] = schema->value(i);
    }
  }
  return keys;
}

bool is_inplace(const OperatorHandle& op) {
  const auto& arguments = op.schema().arguments();
  return !arguments.empty() && arguments[0].type.is_write() && !arguments[0].kwarg_only;
}

}  // namespace

void DTensor::dispatch(const OperatorHandle& op, Stack& stack) {
  const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // as a __torch_dispatch__ runs
  const std::size_t n = op.schema().arguments().size();
  IValue* args = stack.data() + stack.size() - n;
  for (std::uint8_t i : op.entry().written_tensor_arguments())
    STRATA_CHECK(!op.schema().arguments()[i].kwarg_only, op.str(), ": out= variants are not supported on DTensors");
  Unwrapped u;
  unwrap(op, args, n, u);
  const CachedSharding& cached = sharding_propagator().propagate(
      OpCallRef{op, args, n, u.specs.data(), u.spec_hashes.data(), u.shared.data(), u.specs.size()});
  const OutputSharding& sharding = cached.sharding;
  const Tensor self = is_inplace(op) ? std::as_const(args[0]).to_tensor() : Tensor();
  if (self.defined() && of(self) && !sharding.output_specs.empty() && sharding.output_specs[0]) {
    const Placements& mine = of(self)->spec().placements;  // the write must land in self's own local tensor
    STRATA_CHECK(sharding.input_specs[0].placements == mine && sharding.output_specs[0]->placements == mine, op.str(),
                 ": in-place operations that require placement changes are not supported. (self is ",
                 to_string(mine), ", the op's strategy needs ", to_string(sharding.input_specs[0].placements),
                 " and gives ", to_string(sharding.output_specs[0]->placements), ")");
  }
  const bool participating = u.mesh->get_coordinate().has_value();

  if (participating && sharding.needs_redistribute) {
    u.redistributed.resize(u.specs.size());
    for (std::size_t k = 0; k < u.specs.size(); ++k) {
      const DTensorSpec& to = sharding.input_specs[k];
      if (*u.specs[k] == to) continue;
      const DTensorSpec& from = *u.specs[k];
      // upstream's record_redistribute_calls(i, from, to): DebugMode's `redistribute_input(...)`, with
      // the redistribution's collectives and local ops below it
      const RecordRedistribute record(static_cast<std::int64_t>(u.leaf_index[k]), from.placements, to.placements);
      u.redistributed[k] = redistribute_local_tensor(*u.locals[k], from, to);
      u.locals[k] = &u.redistributed[k];
    }
  }

  if (participating && u.borrowed) {
    Dispatcher::call(op, set_local_args(args, n, sharding, u), stack);
  } else if (participating) {
    Stack local;
    push_local_args(args, n, sharding, u, local);
    op.call(local);
    stack.truncate(stack.size() - n);
    for (IValue& r : local) stack.push_back(std::move(r));
  } else {  // a rank outside the mesh computes nothing: empty tensors of the outputs' dtypes
    stack.truncate(stack.size() - n);
    for (const std::optional<DTensorSpec>& s : sharding.output_specs)
      if (s) stack.emplace_back(empty({0}, TensorOptions{s->dtype(), {}}));
    STRATA_CHECK(stack.size() >= op.schema().returns().size() || op.schema().returns().empty(), op.str(),
                 ": a rank outside the mesh cannot answer an op with non-tensor returns");
  }
  if (self.defined() && !sharding.output_specs.empty() && sharding.output_specs[0]) {
    stack.back() = IValue(self);  // an in-place op returns self, whose local tensor it wrote
    return;
  }
  std::size_t k = 0;
  for_each_return_tensor(op, stack, [&](Tensor& t) {
    STRATA_INTERNAL_ASSERT(k < sharding.output_specs.size() && sharding.output_specs[k], op.str(),
                           ": sharding propagation gave no spec for tensor return ", k);
    if (t.defined())
      t = make(std::move(t), cached.outputs[k], false, cached.output_hashes[k], &cached.output_checked[k]);
    ++k;
  });
}

}  // namespace strata::distributed
