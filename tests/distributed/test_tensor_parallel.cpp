// tests/distributed/test_tensor_parallel.cpp: parallelize_module on a fake world (one process acting
// as one rank): the parameters a style makes (DTensors with upstream's placements, named as before,
// in state_dict, requiring grad), the plan's paths and wildcards, the Megatron plan of a deeper MLP,
// a mesh's slice, the module's own hooks, and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/util/error.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/tensor_parallel.h"
#include "nn/layers.h"
#include "ops/functions.h"

namespace test_tensor_parallel {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {
std::string placements_of(const Tensor& t) { return to_string(placements(t)); }
}  // namespace

TEST_CASE("colwise and rowwise parameters: DTensors of upstream's placements, under their names") {
  FakeWorld world(1, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  manual_seed(0);
  auto mlp = nn::make_mlp({16, 32, 4});
  const Tensor w0 = mlp->parameters()[0];
  parallelize_module(*mlp, mesh, {{"0", ColwiseParallel{}}, {"2", RowwiseParallel{}}});
  const auto params = mlp->named_parameters();
  REQUIRE(params.size() == 4);
  CHECK(params[0].first == "0.weight");
  CHECK(placements_of(params[0].second) == "[S(0)]");
  CHECK(placements_of(params[1].second) == "[S(0)]");
  CHECK(placements_of(params[2].second) == "[S(1)]");
  CHECK(placements_of(params[3].second) == "[R]");
  for (const auto& p : params) CHECK(p.second.requires_grad());
  CHECK(params[0].second.sizes() == std::vector<std::int64_t>{32, 16});  // the global shape
  // Rank 1's piece of the weight: rows 16..31.
  CHECK(to_local(params[0].second).equal(narrow(w0, 0, 16, 16)));
  CHECK(to_local(params[2].second).sizes() == std::vector<std::int64_t>{4, 16});
  CHECK(is_dtensor(mlp->state_dict()[2].second));
  // The module's forward runs through the hooks: a plain input in, a local Replicate output out.
  const Tensor out = (*mlp)(ones({8, 16}));
  CHECK(!is_dtensor(out));
  CHECK(out.sizes() == std::vector<std::int64_t>{8, 4});
  CHECK_THROWS_WITH_AS(parallelize_module(*mlp, mesh, {{"0", ColwiseParallel{}}}),
                       "parallelize_module: the parameter 'weight' of Linear is already a DTensor (a module is "
                       "parallelized once)", Error);
}

TEST_CASE("use_local_output=false returns the DTensor; output_layouts redistributes it") {
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  nn::Linear linear(4, 6);
  parallelize_module(linear, mesh, ColwiseParallel{.output_layouts = Replicate{}, .use_local_output = false});
  const Tensor out = linear(ones({3, 4}));
  REQUIRE(is_dtensor(out));
  CHECK(placements_of(out) == "[R]");
  nn::Linear row(6, 2);
  parallelize_module(row, mesh, RowwiseParallel{.use_local_output = false});
  CHECK(placements_of(row(zeros({3, 3}))) == "[R]");
}

TEST_CASE("the plan: wildcards, nested paths, the alternating plan of a deeper MLP") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  auto mlp = nn::make_mlp({8, 16, 16, 8});
  const ParallelizePlan plan = alternating_linear_plan(*mlp);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].first == "0");
  CHECK(std::holds_alternative<RowwiseParallel>(plan[1].second));
  CHECK(plan[1].first == "2");
  CHECK(std::get<ColwiseParallel>(plan[2].second).output_layouts == Placement(Replicate{}));
  auto outer = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{nn::make_mlp({4, 8, 4})});
  parallelize_module(*outer, mesh, {{"*.0", ColwiseParallel{}}, {"?.2", RowwiseParallel{}}});
  const auto params = outer->named_parameters();
  CHECK(params[0].first == "0.0.weight");
  CHECK(placements_of(params[0].second) == "[S(0)]");
  CHECK(params[2].first == "0.2.weight");
  CHECK(placements_of(params[2].second) == "[S(1)]");
}

TEST_CASE("a mesh's slice: the row through this rank, on that dimension's group") {
  FakeWorld world(5, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2}, {"dp", "tp"});
  const DeviceMesh tp = mesh.slice("tp"), dp = mesh.slice(0);
  CHECK(tp.ranks() == std::vector<int>{4, 5});
  CHECK(dp.ranks() == std::vector<int>{1, 3, 5, 7});
  CHECK(tp.group_name(0) == mesh.group_name(1));
  CHECK(dp.group_name(0) == mesh.group_name(0));
  CHECK(tp.dim_names() == std::vector<std::string>{"tp"});
  CHECK((*dp.get_coordinate())[0] == 2);
}

TEST_CASE("errors: a 2-D mesh, an unknown path, an empty one, a module that is not a Linear") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({2, 2});
  auto mlp = nn::make_mlp({4, 8, 4});
  CHECK_THROWS_WITH_AS(parallelize_module(*mlp, mesh, ColwiseParallel{}),
                       "Tensor Parallel only accepts a 1D DeviceMesh, but found 2D!If you have a 2-D or N-D "
                       "device_mesh, consider passing in device_mesh[\"tp\"] (strata: mesh.slice(\"tp\"))", Error);
  const DeviceMesh tp = mesh.slice(1);
  CHECK_THROWS_WITH_AS(parallelize_module(*mlp, tp, {{"5", ColwiseParallel{}}}),
                       "parallelize_module: the plan's path '5' names no submodule of Sequential", Error);
  CHECK_THROWS_WITH_AS(parallelize_module(*mlp, tp, {{"", ColwiseParallel{}}}),
                       "Expect module path to be non-empty, but got empty string!", Error);
  CHECK_THROWS_WITH_AS(parallelize_module(*mlp, tp, {{"1", RowwiseParallel{}}}),
                       "RowwiseParallel currently only support nn.Linear (nn.Embedding is upstream's too, not yet "
                       "strata's); got ReLU", Error);
}

TEST_CASE("a module's own hooks run after the global ones and only for that module") {
  nn::Linear a(2, 2), b(2, 2);
  std::vector<std::string> seen;
  a.register_forward_pre_hook([&](nn::Module&, const Tensor& in) -> std::optional<Tensor> {
    seen.push_back("pre");
    return mul(in, 0.0);
  });
  a.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& out) -> std::optional<Tensor> {
    seen.push_back("post");
    return add(out, 1.0);
  });
  const Tensor out = a(ones({1, 2}));
  CHECK(seen == std::vector<std::string>{"pre", "post"});
  CHECK(out.equal(add(a.bias().detach().view({1, 2}), 1.0)));
  (void)b(ones({1, 2}));
  CHECK(seen.size() == 2);
}

}  // namespace test_tensor_parallel
