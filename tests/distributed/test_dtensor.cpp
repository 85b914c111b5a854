// tests/distributed/test_dtensor.cpp: DTensor on the fake group (one process acting as one rank of
// a larger world): the wrapper's global shape, stride, dtype and spec from from_local (even shards,
// uneven ones with an explicit shape, negative shard dimensions, strides as upstream rescales them),
// distribute_tensor's piece for a rank, to_local and from_local as autograd functions, flatten,
// repr, DebugMode's suffix, and upstream's errors for bad input.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/util/error.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/shard_layout.h"
#include "modes/debug_mode.h"
#include "ops/functions.h"

namespace test_dtensor {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;
using Sizes = std::vector<std::int64_t>;

namespace {
Tensor iota(Sizes shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return arange(n, TensorOptions{ScalarType::Float32, {}}).view(shape);
}
}  // namespace

TEST_CASE("from_local: the global shape and stride from the local tensor, the spec, the accessors") {
  FakeWorld world(5, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  const Tensor local = iota({2, 3});
  const Tensor d = DTensor::from_local(local, mesh, {Shard{0}, Replicate{}});
  REQUIRE(is_dtensor(d));
  CHECK_FALSE(is_dtensor(local));
  CHECK(d.sizes().vec() == Sizes{8, 3});
  CHECK(d.strides().vec() == Sizes{3, 1});
  CHECK(d.dtype() == ScalarType::Float32);
  CHECK_FALSE(d.requires_grad());
  CHECK(device_mesh(d) == mesh);
  CHECK(placements(d) == Placements{Shard{0}, Replicate{}});
  const DTensorSpec& spec = dtensor_spec(d);
  CHECK(to_string(spec) == "Spec(DM(4, 2), [S(0), R], f32[8, 3])");
  CHECK(spec.stride() == Sizes{3, 1});
  CHECK(equal(to_local(d), local));
  CHECK(DTensor::of(d)->local().sizes().vec() == Sizes{2, 3});

  // Both mesh dimensions shard dimension 1: 3 * 4 * 2 columns; the row stride grows twice.
  const Tensor both = DTensor::from_local(local, mesh, {Shard{1}, Shard{-1}});
  CHECK(placements(both) == Placements{Shard{1}, Shard{1}});  // Shard(-1) normalized to the local rank
  CHECK(both.sizes().vec() == Sizes{2, 24});
  CHECK(both.strides().vec() == Sizes{24, 1});
  // upstream's example: local (4, 8, 2) with strides (16, 1, 8), Shard(2) on 2 ranks: (4, 8, 4), (32, 1, 8).
  FakeWorld pair(1, 2);
  const Tensor permuted = permute(iota({4, 2, 8}), {0, 2, 1});
  REQUIRE(permuted.strides().vec() == Sizes{16, 1, 8});
  const Tensor p = DTensor::from_local(permuted, init_device_mesh({2}), {Shard{2}});
  CHECK(p.sizes().vec() == Sizes{4, 8, 4});
  CHECK(p.strides().vec() == Sizes{32, 1, 8});
  // Partial and Replicate leave the shape as it is.
  const Tensor partial = DTensor::from_local(local, init_device_mesh({2}), {Partial{}});
  CHECK(partial.sizes().vec() == Sizes{2, 3});
  CHECK(placements(partial) == Placements{Partial{}});
}

TEST_CASE("from_local with an uneven shard: the global shape and stride as given") {
  FakeWorld world(3, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  // 7 rows on 4 ranks are cut 2, 2, 2, 1: rank 3 holds one row.
  const LocalShape piece = compute_local_shape_and_global_offset({7, 3}, {4}, mesh.get_coordinate(), {Shard{0}});
  REQUIRE(piece.shape == Sizes{1, 3});
  const Tensor d = DTensor::from_local(iota(piece.shape), mesh, {Shard{0}}, false, Sizes{7, 3}, Sizes{3, 1});
  CHECK(d.sizes().vec() == Sizes{7, 3});
  CHECK(to_local(d).sizes().vec() == Sizes{1, 3});
  // Without the shape, upstream assumes even shards: 4 rows.
  CHECK(DTensor::from_local(iota(piece.shape), mesh, {Shard{0}}).sizes().vec() == Sizes{4, 3});
}

TEST_CASE("from_local and to_local are autograd functions: the local gradient comes back") {
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  const Tensor x = iota({2, 3});
  requires_grad_(x);
  const Tensor d = DTensor::from_local(x, mesh, {Shard{0}});
  CHECK(d.requires_grad());
  CHECK_FALSE(d.is_leaf());
  const Tensor y = to_local(d);
  CHECK(y.requires_grad());
  CHECK(y.impl() != DTensor::of(d)->local().impl());  // a fresh alias: the DTensor's local has no history
  backward(mul(y, y).sum());
  REQUIRE(x.grad().defined());
  CHECK_FALSE(is_dtensor(x.grad()));
  CHECK(equal(x.grad(), mul(x, 2.0)));

  // Without grad mode, to_local is the local tensor itself.
  NoGradGuard no_grad;
  CHECK(to_local(d).impl() == DTensor::of(d)->local().impl());
}

TEST_CASE("to_local's backward makes the gradient a DTensor with the forward's or the asked placements") {
  FakeWorld world(1, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  const Tensor leaf = distribute_tensor(requires_grad_(iota({4, 3})), mesh, {Shard{0}});
  REQUIRE(leaf.is_leaf());
  REQUIRE(leaf.requires_grad());
  const Tensor local = to_local(leaf);
  const Tensor g = autograd::grad({mul(local, 0.5).sum()}, {leaf})[0];
  REQUIRE(is_dtensor(g));
  CHECK(placements(g) == Placements{Shard{0}});
  CHECK(g.sizes().vec() == Sizes{4, 3});
  CHECK(g.strides().vec() == Sizes{3, 1});
  CHECK(equal(DTensor::of(g)->local(), full({2, 3}, 0.5)));

  const Tensor asked = autograd::grad({mul(to_local(leaf, Placements{Partial{}}), 2.0).sum()}, {leaf})[0];
  REQUIRE(is_dtensor(asked));
  CHECK(placements(asked) == Placements{Partial{}});
  CHECK(equal(DTensor::of(asked)->local(), full({2, 3}, 2.0)));
  // Accumulated into the leaf: the first gradient is kept (a detach), the second added in place.
  backward(mul(to_local(leaf), 0.5).sum());
  backward(mul(to_local(leaf), 0.5).sum());
  REQUIRE(is_dtensor(leaf.grad()));
  CHECK(placements(leaf.grad()) == Placements{Shard{0}});
  CHECK(equal(DTensor::of(leaf.grad())->local(), ones({2, 3})));
  // sum's gradient is expanded: the DTensor gradient's stride is computed from it, as upstream's.
  const Tensor expanded = autograd::grad({to_local(leaf).sum()}, {leaf})[0];
  CHECK(expanded.strides().vec() == Sizes{0, 0});
}

TEST_CASE("distribute_tensor: each rank's piece as torch.chunk cuts it, on a (4, 2) mesh") {
  const Tensor whole = iota({7, 5});
  for (int rank = 0; rank < 8; ++rank) {
    CAPTURE(rank);
    FakeWorld world(rank, 8);
    const DeviceMesh mesh = init_device_mesh({4, 2});
    const Tensor d = distribute_tensor(whole, mesh, {Shard{0}, Shard{-1}});
    CHECK(placements(d) == Placements{Shard{0}, Shard{1}});
    CHECK(d.sizes().vec() == Sizes{7, 5});
    CHECK_FALSE(d.requires_grad());
    const LocalShape piece = compute_local_shape_and_global_offset({7, 5}, {4, 2}, mesh.get_coordinate(), placements(d));
    const Tensor local = to_local(d);
    REQUIRE(local.sizes().vec() == piece.shape);
    const Tensor expected = narrow(narrow(whole, 0, piece.global_offset[0], piece.shape[0]), 1,
                                   piece.global_offset[1], piece.shape[1]);
    CHECK(equal(local, expected));
    CHECK(local.is_contiguous());
    const Tensor replicated = distribute_tensor(whole, mesh, {Replicate{}, Shard{0}});
    CHECK(to_local(replicated).sizes()[1] == 5);
  }
}

TEST_CASE("a rank outside the mesh holds an empty local tensor") {
  FakeWorld world(5, 8);
  const DeviceMesh mesh({2}, {0, 1});
  REQUIRE_FALSE(mesh.get_coordinate().has_value());
  const Tensor d = distribute_tensor(iota({4, 2}), mesh, {Shard{0}});
  CHECK(d.sizes().vec() == Sizes{4, 2});
  CHECK(to_local(d).sizes().vec() == Sizes{0});
  const Tensor f = DTensor::from_local(iota({2, 2}), mesh, {Shard{0}});
  CHECK(f.sizes().vec() == Sizes{4, 2});
  CHECK(to_local(f).sizes().vec() == Sizes{0});
}

TEST_CASE("run_check on the fake group: the checks pass, the local tensor is this rank's") {
  FakeWorld world(2, 4);
  const DeviceMesh mesh = init_device_mesh({2, 2});
  const Tensor local = iota({2, 3});
  const Tensor d = DTensor::from_local(local, mesh, {Replicate{}, Shard{1}}, true);
  CHECK(d.sizes().vec() == Sizes{2, 6});
  CHECK(equal(to_local(d), local));
}

TEST_CASE("flatten and unflatten, repr and DebugMode's suffix") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const Tensor d = DTensor::from_local(ones({2, 2}), mesh, {Shard{1}});
  const FlattenedTensor flat = d.subclass()->flatten(d);
  CHECK(flat.names == std::vector<std::string>{"_local_tensor"});
  const Tensor back = d.subclass()->unflatten(flat, d.sizes(), d.strides());
  CHECK(dtensor_spec(back) == dtensor_spec(d));
  CHECK(d.subclass()->repr(d) ==
        "DTensor(local_tensor=tensor([[1., 1.],\n        [1., 1.]]), device_mesh=DM(4), placements=(S(1),))");
  const auto* named = dynamic_cast<const DebugModeSubclass*>(d.subclass());
  REQUIRE(named != nullptr);
  CHECK(named->debug_prefix() == "dt");
  CHECK(named->debug_placements(d) == Placements{Shard{1}});
}

TEST_CASE("upstream's errors for bad input, naming the function, placements and shapes") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({2, 2});
  const Tensor local = iota({2, 3});
  const Tensor d = DTensor::from_local(local, mesh, {Shard{0}, Replicate{}});
  CHECK_THROWS_WITH_AS(DTensor::from_local(d, mesh, {Shard{0}, Replicate{}}),
                       doctest::Contains("the local_tensor argument only accepts torch.Tensor"), Error);
  CHECK_THROWS_WITH_AS(DTensor::from_local(local, mesh, {Shard{0}}),
                       "DTensor.from_local: `placements` must have the same length as `device_mesh.ndim`! Found "
                       "placements length: 1, and device_mesh.ndim: 2.", Error);
  CHECK_THROWS_WITH_AS(DTensor::from_local(local, mesh, {Shard{2}, Replicate{}}),
                       "Sharding dim 2 greater than tensor ndim 2 for placement number 0.", Error);
  CHECK_THROWS_WITH_AS(DTensor::from_local(local, mesh, {Shard{0}, Replicate{}}, false, Sizes{4, 3}),
                       "DTensor.from_local: Found shape:[4, 3], stride:None. Please pass both shape and stride at the "
                       "same time.", Error);
  CHECK_THROWS_WITH_AS(distribute_tensor(local, mesh, {Partial{}, Replicate{}}),
                       "Trying to distribute tensor with unsupported placements P on device mesh dimension 0!", Error);
  CHECK_THROWS_WITH_AS(distribute_tensor(local, mesh, {Replicate{}}),
                       "`placements` must have the same length as `device_mesh.ndim`! Found placements length: 1, and "
                       "device_mesh.ndim: 2.", Error);
  const Tensor leaf = requires_grad_(iota({2, 3}));
  CHECK_THROWS_WITH_AS(distribute_tensor(mul(leaf, 2.0), mesh, {Replicate{}, Replicate{}}),
                       "`distribute_tensor` should be used to distribute leaf tensors! but found non-leaf tensor!", Error);
  CHECK_THROWS_WITH_AS(distribute_tensor(local, mesh, {Shard{2}, Replicate{}}),
                       "distribute_tensor: Shard(dim=2) on mesh dimension 0 shards a dimension a tensor of shape [2, 3] "
                       "does not have", Error);
  CHECK_THROWS_WITH_AS(distribute_tensor(d, mesh, {Replicate{}, Replicate{}}),
                       "Cannot distribute a DTensor with placements [S(0), R] to a different placements [R, R]. do you "
                       "want to call `redistribute` instead?", Error);
  CHECK(distribute_tensor(d, mesh, {Shard{0}, Replicate{}}).impl() == d.impl());
  CHECK_THROWS_WITH_AS(redistribute(d, {Shard{0}, Partial{}}),
                       "Can not redistribute from R to P, redistributing to Partial is for internal use only!", Error);
  CHECK_THROWS_WITH_AS(redistribute(d, {Shard{0}}), doctest::Contains("1 placements [S(0)] for a mesh of 2 dimensions"),
                       Error);
  CHECK_THROWS_WITH_AS(to_local(local), "DTensor.to_local: expected a DTensor, got a plain tensor", Error);
  CHECK_THROWS_WITH_AS(placements(local), "placements: expected a DTensor, got a plain tensor", Error);
}

TEST_CASE("ops on DTensors: propagation's output spec, the op run on the local tensors") {
  FakeWorld world(1, 4);
  const DeviceMesh mesh = init_device_mesh({2, 2});
  const Tensor a = DTensor::from_local(iota({2, 3}), mesh, {Shard{0}, Replicate{}});
  const Tensor b = DTensor::from_local(full({2, 3}, 2.0), mesh, {Shard{0}, Replicate{}});
  const Tensor sum = add(a, b);
  REQUIRE(is_dtensor(sum));
  CHECK(placements(sum) == Placements{Shard{0}, Replicate{}});
  CHECK(sum.sizes().vec() == Sizes{4, 3});
  CHECK(equal(DTensor::of(sum)->local(), add(iota({2, 3}), full({2, 3}, 2.0))));
  // A plain one-element tensor joins as a replicated one (upstream's scalar tensor rule).
  const Tensor scaled = mul(a, scalar_tensor(3.0, TensorOptions{ScalarType::Float32, {}}));
  CHECK(placements(scaled) == Placements{Shard{0}, Replicate{}});
  CHECK(equal(DTensor::of(scaled)->local(), mul(iota({2, 3}), 3.0)));
  // An in-place op writes the local tensor and returns the DTensor itself.
  const Tensor c = DTensor::from_local(iota({2, 3}), mesh, {Shard{0}, Replicate{}});
  const Tensor& same = mul_(c, 2.0);
  CHECK(same.impl() == c.impl());
  CHECK(equal(DTensor::of(c)->local(), mul(iota({2, 3}), 2.0)));
  // An in-place op keeps self's placements: a Partial term is made Replicate first (the fake group's
  // all_reduce leaves this rank's term as it is).
  const Tensor replicated_self = DTensor::from_local(iota({2, 3}), mesh, {Replicate{}, Replicate{}});
  const Tensor partial_term = DTensor::from_local(full({2, 3}, 1.0), mesh, {Partial{}, Replicate{}});
  CHECK(add_(replicated_self, partial_term).impl() == replicated_self.impl());
  CHECK(placements(replicated_self) == Placements{Replicate{}, Replicate{}});
  CHECK(equal(DTensor::of(replicated_self)->local(), add(iota({2, 3}), 1.0)));
  // Partial stays Partial through a linear op.
  const Tensor p = DTensor::from_local(iota({2, 3}), mesh, {Partial{}, Replicate{}});
  CHECK(placements(add(p, p)) == Placements{Partial{}, Replicate{}});

  CHECK_THROWS_WITH_AS(add(a, iota({4, 3})),
                       doctest::Contains("got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
                                         "DTensor before calling distributed operators!"), Error);
  CHECK_THROWS_WITH_AS(topk(a, 1), doctest::Contains("does not have a sharding strategy registered."), Error);
}

TEST_CASE("autograd through ops on DTensors: the gradient of from_local's input is local") {
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  const Tensor x = requires_grad_(iota({2, 3}));
  const Tensor d = DTensor::from_local(x, mesh, {Shard{1}});
  const Tensor y = mul(d, d);
  REQUIRE(is_dtensor(y));
  CHECK(y.requires_grad());
  backward(mul(to_local(y), 1.0).sum());
  REQUIRE(x.grad().defined());
  CHECK_FALSE(is_dtensor(x.grad()));
  CHECK(equal(x.grad(), mul(iota({2, 3}), 2.0)));
}

TEST_CASE("a rank outside the mesh runs no op: empty results of the outputs' dtype") {
  FakeWorld world(3, 4);
  const DeviceMesh mesh({2}, {0, 1});
  const Tensor a = DTensor::from_local(iota({2, 3}), mesh, {Shard{0}});
  const Tensor out = add(a, a);
  CHECK(out.sizes().vec() == Sizes{4, 3});
  CHECK(to_local(out).sizes().vec() == Sizes{0});
}

TEST_CASE("DebugMode names a DTensor dt, with its placements, and logs its local ops one level deeper") {
  FakeWorld world(1, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const Tensor a = DTensor::from_local(iota({2, 8}), mesh, {Shard{0}});
  tracer::DebugMode mode;  // the seed's format: `dt: f32[8, 8][S(0)]`
  {
    tracer::DebugMode::Guard guard(mode);
    (void)add(a, a);
  }
  CHECK(mode.debug_string() == "  aten::add.Tensor(dt: f32[8, 8][S(0)], dt: f32[8, 8][S(0)])\n"
                               "    aten::add.Tensor(t: f32[2, 8], t: f32[2, 8])  ->  t: f32[2, 8]");
}

}  // namespace test_dtensor
