// distributed/dtensor_dispatch.cpp: ops on DTensors (upstream's OpDispatcher.dispatch, _dispatch.py):
// the arguments unwrapped to specs, sharding propagation's decision, the inputs redistributed where
// it says, the op run on the local tensors, the results wrapped as DTensors of the output specs.
#include <string>
#include <utility>
#include <vector>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/shape.h"
#include "core/util/error.h"
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

// The op's call in spec space, and the local tensor of each DTensor argument (args_spec order, with
// its index among the flattened arguments).
struct Unwrapped {
  std::vector<OpArg> args;
  std::vector<Tensor> locals;
  std::vector<std::size_t> leaf_index;
  const DeviceMesh* mesh = nullptr;
};

Unwrapped unwrap(const OperatorHandle& op, const IValue* args, std::size_t n) {
  Unwrapped u;
  for (std::size_t i = 0; i < n && !u.mesh; ++i) {  // upstream's compute mesh: the first DTensor's
    if (args[i].is_tensor() && DTensor::of(args[i].to_tensor())) u.mesh = &DTensor::of(args[i].to_tensor())->spec().mesh;
    if (args[i].is_tensor_list())
      for (const Tensor& t : args[i].to_tensor_list())
        if (!u.mesh && DTensor::of(t)) u.mesh = &DTensor::of(t)->spec().mesh;
  }
  STRATA_INTERNAL_ASSERT(u.mesh != nullptr, "the DTensor handler got ", op.str(), " without a DTensor argument");
  const auto spec_of = [&](const Tensor& t, std::size_t leaf) {
    u.leaf_index.push_back(leaf);
    if (const DTensor* d = DTensor::of(t)) {
      STRATA_CHECK(d->spec().mesh == *u.mesh, op.str(), ": DTensor does not support cross-mesh operation on ",
                   u.mesh->short_str(), " and ", d->spec().mesh.short_str());
      u.locals.push_back(d->local());
      return d->spec();
    }
    u.locals.push_back(t);
    return replicate_spec_for_plain(op, t, *u.mesh);
  };
  std::size_t leaf = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const IValue& a = args[i];
    if (a.is_tensor() && a.to_tensor().defined()) {
      u.args.emplace_back(spec_of(a.to_tensor(), leaf));
    } else if (a.is_tensor_list()) {
      std::vector<DTensorSpec> specs;
      for (std::size_t k = 0; k < a.to_tensor_list().size(); ++k) specs.push_back(spec_of(a.to_tensor_list()[k], leaf + k));
      u.args.emplace_back(std::move(specs));
    } else {
      u.args.emplace_back(a);
    }
    leaf += leaves_of(a);
  }
  return u;
}

// The local call's arguments: the (redistributed) local tensors in place of the DTensors, the other
// values from `schema` (the redistribute schema carries a view's local shape).
void write_local_args(IValue* args, const OpSchema& schema, const std::vector<Tensor>& locals) {
  std::size_t flat = 0;
  for (std::size_t i = 0; i < schema.args.size(); ++i) {
    const OpArg& a = schema.args[i];
    if (std::holds_alternative<DTensorSpec>(a)) {
      args[i] = IValue(locals[flat++]);
    } else if (std::holds_alternative<std::vector<DTensorSpec>>(a)) {
      std::vector<Tensor> list;
      for (std::size_t k = 0; k < std::get<std::vector<DTensorSpec>>(a).size(); ++k) list.push_back(locals[flat++]);
      args[i] = IValue(std::move(list));
    } else {
      args[i] = std::get<IValue>(a);
    }
  }
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
  for (std::size_t i = 0; i < n; ++i)
    STRATA_CHECK(!op.schema().arguments()[i].kwarg_only || !op.schema().arguments()[i].type.is_write(), op.str(),
                 ": out= variants are not supported on DTensors");
  Unwrapped u = unwrap(op, args, n);
  OpSchema schema{op, std::move(u.args)};
  const OutputSharding& sharding = sharding_propagator().propagate(schema);
  const Tensor self = is_inplace(op) ? args[0].to_tensor() : Tensor();
  if (self.defined() && of(self) && !sharding.output_specs.empty() && sharding.output_specs[0]) {
    const Placements& mine = of(self)->spec().placements;  // the write must land in self's own local tensor
    STRATA_CHECK(sharding.input_specs[0].placements == mine && sharding.output_specs[0]->placements == mine, op.str(),
                 ": in-place operations that require placement changes are not supported. (self is ",
                 to_string(mine), ", the op's strategy needs ", to_string(sharding.input_specs[0].placements),
                 " and gives ", to_string(sharding.output_specs[0]->placements), ")");
  }
  const bool participating = u.mesh->get_coordinate().has_value();

  if (participating && sharding.needs_redistribute) {
    const std::vector<const DTensorSpec*> current = schema.args_spec();
    for (std::size_t k = 0; k < current.size(); ++k) {
      const DTensorSpec& to = sharding.input_specs[k];
      if (*current[k] == to) continue;
      const Tensor local = u.locals[k];
      const DTensorSpec& from = *current[k];
      // upstream's record_redistribute_calls(i, from, to): DebugMode's `redistribute_input(...)`, with
      // the redistribution's collectives and local ops below it
      const RecordRedistribute record(static_cast<std::int64_t>(u.leaf_index[k]), from.placements, to.placements);
      u.locals[k] = redistribute_local_tensor(local, from, to);
    }
  }
  write_local_args(args, sharding.redistribute_schema ? *sharding.redistribute_schema : schema, u.locals);

  if (participating) {
    op.call(stack);
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
    const DTensorSpec& spec = *sharding.output_specs[k++];
    if (t.defined()) t = make(t, spec, false);
  });
}

}  // namespace strata::distributed
