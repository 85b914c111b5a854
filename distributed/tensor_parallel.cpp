// distributed/tensor_parallel.cpp: parallelize_module's walk of the plan and the two styles
// (Note [Tensor-parallel styles hook the module]).
#include "distributed/tensor_parallel.h"

#include <memory>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/util/error.h"
#include "distributed/dtensor.h"
#include "distributed/functional_collectives.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "ops/tensor_methods.h"

namespace strata::distributed {

namespace {

// The module's type name as repr() begins ("Linear", "Sequential").
std::string module_type(const nn::Module& m) {
  const std::string r = m.repr();
  return r.substr(0, r.find('('));
}

// fnmatch's * and ? (upstream matches each path atom with fnmatch against the children's names).
bool glob_match(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern[0] == '*')
    return glob_match(pattern.substr(1), name) || (!name.empty() && glob_match(pattern, name.substr(1)));
  return !name.empty() && (pattern[0] == '?' || pattern[0] == name[0]) && glob_match(pattern.substr(1), name.substr(1));
}

// A Shard(-1) read against a tensor of `ndim` dimensions, as placements are compared.
Placement normalized(const Placement& p, std::int64_t ndim) {
  if (p.is_shard() && p.dim() < 0) return Shard{p.dim() + ndim};
  return p;
}

// The parameter `name` of `module` becomes its DTensor on `mesh` with `placement`, a leaf that
// requires grad as the parameter did (upstream's nn.Parameter(distribute_tensor(...))).
void distribute_parameter(nn::Module& module, const std::string& name, const Tensor& param, const DeviceMesh& mesh,
                          const Placement& placement) {
  if (!param.defined()) return;
  STRATA_CHECK(!is_dtensor(param), "parallelize_module: the parameter '", name, "' of ", module_type(module),
               " is already a DTensor (a module is parallelized once)");
  Tensor dist = distribute_tensor(detach(param), mesh, {placement});
  if (param.requires_grad()) requires_grad_(dist);
  module.replace_parameter(name, dist);
}

struct Layouts {
  Placement input, desired_input, output;
  bool use_local_output;
};

// distribute_module's hooks: the input prepared on the way in, the output on the way out.
void register_hooks(nn::Module& module, const DeviceMesh& mesh, const Layouts& layouts) {
  module.register_forward_pre_hook([mesh, layouts](nn::Module&, const Tensor& input) -> std::optional<Tensor> {
    Tensor in = input;
    if (!is_dtensor(in)) in = DTensor::from_local(in, mesh, {layouts.input});
    const std::int64_t ndim = in.dim();
    if (normalized(placements(in)[0], ndim) != normalized(layouts.desired_input, ndim))
      in = redistribute(in, {layouts.desired_input});
    return in;
  });
  module.register_forward_hook(
      [layouts](nn::Module&, const Tensor&, const Tensor& output) -> std::optional<Tensor> {
        STRATA_CHECK(is_dtensor(output), "parallelize_module: the parallelized module's output is not a DTensor");
        Tensor out = output;
        const std::int64_t ndim = out.dim();
        if (normalized(placements(out)[0], ndim) != normalized(layouts.output, ndim))
          out = redistribute(out, {layouts.output});
        if (layouts.use_local_output) out = to_local(out);
        return out;
      });
}

nn::Linear& as_linear(nn::Module& module, const char* style) {
  auto* linear = dynamic_cast<nn::Linear*>(&module);
  STRATA_CHECK(linear != nullptr, style, " currently only support nn.Linear (nn.Embedding is upstream's too, not yet "
               "strata's); got ", module_type(module));
  return *linear;
}

void apply(nn::Module& module, const DeviceMesh& mesh, const ColwiseParallel& s) {
  nn::Linear& linear = as_linear(module, "ColwiseParallel");
  distribute_parameter(module, "weight", linear.weight(), mesh, Shard{0});
  distribute_parameter(module, "bias", linear.bias(), mesh, Shard{0});
  register_hooks(module, mesh,
                 {s.input_layouts.value_or(Replicate{}), Replicate{}, s.output_layouts.value_or(Shard{-1}),
                  s.use_local_output});
}

void apply(nn::Module& module, const DeviceMesh& mesh, const RowwiseParallel& s) {
  nn::Linear& linear = as_linear(module, "RowwiseParallel");
  distribute_parameter(module, "weight", linear.weight(), mesh, Shard{1});
  distribute_parameter(module, "bias", linear.bias(), mesh, Replicate{});
  register_hooks(module, mesh,
                 {s.input_layouts.value_or(Shard{-1}), Shard{-1}, s.output_layouts.value_or(Replicate{}),
                  s.use_local_output});
}

// The submodules under `module` that `path` names (each atom matched against the children's names).
void match_path(nn::Module& module, std::string_view path, std::vector<nn::Module*>& out) {
  const std::size_t dot = path.find('.');
  const std::string_view atom = path.substr(0, dot);
  for (const auto& [name, child] : module.named_children()) {
    if (!glob_match(atom, name)) continue;
    if (dot == std::string_view::npos)
      out.push_back(child.get());
    else
      match_path(*child, path.substr(dot + 1), out);
  }
}

}  // namespace

nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelStyle& style) {
  STRATA_CHECK(mesh.ndim() == 1, "Tensor Parallel only accepts a 1D DeviceMesh, but found ", mesh.ndim(),
               "D!If you have a 2-D or N-D device_mesh, consider passing in device_mesh[\"tp\"] (strata: "
               "mesh.slice(\"tp\"))");
  std::visit([&](const auto& s) { apply(module, mesh, s); }, style);
  return module;
}

nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelizePlan& plan) {
  for (const auto& entry : plan) {
    STRATA_CHECK(!entry.first.empty(), "Expect module path to be non-empty, but got empty string!");
    std::vector<nn::Module*> matched;
    match_path(module, entry.first, matched);
    STRATA_CHECK(!matched.empty(), "parallelize_module: the plan's path '", entry.first, "' names no submodule of ",
                 module_type(module));
    for (nn::Module* m : matched) parallelize_module(*m, mesh, entry.second);
  }
  return module;
}

ParallelizePlan alternating_linear_plan(const nn::Module& sequential) {
  ParallelizePlan plan;
  for (const auto& [name, child] : sequential.named_children()) {
    if (dynamic_cast<const nn::Linear*>(child.get()) == nullptr) continue;
    if (plan.size() % 2 == 0)
      plan.emplace_back(name, ColwiseParallel{});
    else
      plan.emplace_back(name, RowwiseParallel{});
  }
  STRATA_CHECK(!plan.empty(), "alternating_linear_plan: ", module_type(sequential), " has no Linear child");
  if (plan.size() % 2 == 1) std::get<ColwiseParallel>(plan.back().second).output_layouts = Replicate{};
  return plan;
}

void average_gradients(const nn::Module& module, const DeviceMesh& mesh, int dim) {
  const std::string& group = mesh.group_name(dim);
  const NoGradGuard no_grad;
  for (const Tensor& p : module.parameters()) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    const Tensor local = is_dtensor(g) ? DTensor::of(g)->local() : g;
    local.copy_(wait_tensor(all_reduce(local, "avg", group)));
  }
}

}  // namespace strata::distributed
