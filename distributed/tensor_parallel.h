// distributed/tensor_parallel.h: tensor parallelism (upstream's torch.distributed.tensor.parallel:
// api.py's parallelize_module, style.py's ColwiseParallel and RowwiseParallel). parallelize_module
// walks a plan of fully qualified module names ("0", "2", "layers.*.up") to styles; a style makes the
// module's parameters DTensors sharded on a 1-D mesh (in place, through Module::replace_parameter,
// keeping their names, so state_dict and parameters() give the DTensors) and registers the module's
// own forward pre-hook (the input made a DTensor of the style's input layouts, then redistributed to
// the layouts the style computes on) and forward hook (the output redistributed to the style's
// output layouts and, with use_local_output, returned as its local tensor).
//
// The interface (stable; strata-trace's --tp builds on it):
//   const DeviceMesh tp = init_device_mesh({2});             // or mesh2d.slice("tp")
//   parallelize_module(*mlp, tp, {{"0", ColwiseParallel{}}, {"2", RowwiseParallel{}}});
//   parallelize_module(*mlp, tp, alternating_linear_plan(*mlp));     // the same, for any depth
//   optim::SGD opt(mlp->parameters(), ...);                   // after parallelizing: DTensor parameters
// After a 2-D step, average_gradients(*mlp, mesh2d, dp_dim) averages the gradients over data parallel.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "../nn/module.h"
#include "device_mesh.h"
#include "placement.h"

namespace strata::distributed {

// Note [Tensor-parallel styles hook the module]
// As upstream's distribute_module: the style replaces the module's parameters by DTensors (a leaf
// each, requiring grad as the parameter did) and registers the module's own forward pre-hook and
// forward hook (Module::register_forward_pre_hook / register_forward_hook, run by module(input)).
// The pre-hook turns a plain input into a DTensor with DTensor::from_local(input, mesh,
// input_layouts) (an input that already is a DTensor is used as it is), then redistributes it to the
// style's desired layouts when they differ; the hook redistributes the output to output_layouts when
// its placements differ and returns to_local(output) when use_local_output. All of these are
// differentiable, so the backward runs through the DTensor handler and leaves DTensor gradients on
// the parameters, which SGD updates in place through the same handler. The hooks hold the mesh and
// the style by value and live as long as the module; a module is parallelized once.

// Linear: weight [out, in] and bias as Shard(0); the input, given as input_layouts (Replicate), is
// computed on Replicate; the output (Shard(-1)) goes to output_layouts (Shard(-1)).
struct ColwiseParallel {
  std::optional<Placement> input_layouts;   // default Replicate()
  std::optional<Placement> output_layouts;  // default Shard(-1)
  bool use_local_output = true;
};

// Linear: weight as Shard(1), bias Replicate; the input, given as input_layouts (Shard(-1)), is
// computed on Shard(-1); the output (Partial) goes to output_layouts (Replicate: an all-reduce).
struct RowwiseParallel {
  std::optional<Placement> input_layouts;   // default Shard(-1)
  std::optional<Placement> output_layouts;  // default Replicate()
  bool use_local_output = true;
};

using ParallelStyle = std::variant<ColwiseParallel, RowwiseParallel>;
// Module paths (dot-separated names under the module parallelize_module is given; each atom may use
// fnmatch's * and ?) to styles, applied in order.
using ParallelizePlan = std::vector<std::pair<std::string, ParallelStyle>>;

// upstream's parallelize_module: `style` applied to `module` itself, or each entry of `plan` to the
// submodules its path names. `mesh` must be 1-D (a 2-D mesh's tensor-parallel dimension is
// mesh.slice("tp")). Errors: a mesh of more dimensions, a path that matches no submodule, an empty
// path, a style on a module it does not support (Linear only), a module parallelized twice.
nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelStyle& style);
nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelizePlan& plan);

// The Megatron plan for a Sequential MLP (Linear, ReLU, Linear, ...): its Linear children (by
// name) alternate ColwiseParallel and RowwiseParallel, starting with Colwise; when their number is
// odd, the last (Colwise) one's output_layouts is Replicate, so the model's output is whole.
ParallelizePlan alternating_linear_plan(const nn::Module& sequential);

// Data parallel beside tensor parallel: every parameter's gradient (a DTensor's local tensor, or a
// plain gradient) averaged in place over mesh dimension `dim`'s group (an all-reduce, "avg"), which
// makes the step the one of the whole batch when each coordinate along `dim` had an equal share of it.
void average_gradients(const nn::Module& module, const DeviceMesh& mesh, int dim);

}  // namespace strata::distributed
