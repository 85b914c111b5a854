// tests/distributed/test_dtensor_threads.cpp: DTensor values on thread ranks: from_local's run_check
// (metadata compared across the world, Replicate broadcast from each mesh dimension's first rank),
// distribute_tensor then full_tensor giving the tensor back on 1-D and 2-D meshes (uneven shapes
// included), gradients through redistribute, from_local, to_local and full_tensor with upstream's
// placements and values, and an op whose inputs the handler redistributes.
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/variable.h"
#include "core/util/error.h"
#include "distributed/dtensor.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"
#include "tests/distributed/rank_failures.h"

namespace test_dtensor_threads {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;
using Sizes = std::vector<std::int64_t>;

namespace {

Tensor iota(const Sizes& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return arange(n, TensorOptions{ScalarType::Float32, {}}).view(shape);
}

using Failures = strata::testing::RankFailures;

}  // namespace

TEST_CASE("run_check broadcasts a Replicate dimension from its first rank" * doctest::test_suite("threads")) {
  Failures failures;
  spawn(4, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({2, 2});
    const std::int64_t i = (*mesh.get_coordinate())[0];
    const Tensor mine = full({2, 3}, static_cast<double>(rank));
    // [S(0), R]: along dimension 1 everyone takes rank (i, 0)'s tensor, rank 2 * i.
    const Tensor sharded = DTensor::from_local(mine, mesh, {Shard{0}, Replicate{}}, true);
    failures.check(equal(to_local(sharded), full({2, 3}, 2.0 * static_cast<double>(i))), rank, "[S(0), R]");
    // [R, R]: first rank (0, j)'s (j), then rank (i, 0)'s, which is by then rank (0, 0)'s: 0.
    const Tensor replicated = DTensor::from_local(mine, mesh, {Replicate{}, Replicate{}}, true);
    failures.check(equal(to_local(replicated), zeros({2, 3})), rank, "[R, R]");
    // Without run_check, each rank keeps its own.
    failures.check(equal(to_local(DTensor::from_local(mine, mesh, {Replicate{}, Replicate{}})), mine), rank, "no check");
    failures.check(equal(mine, full({2, 3}, static_cast<double>(rank))), rank, "the input is left as it was");
  });
  failures.report();
}

TEST_CASE("run_check refuses local tensors whose shapes differ across ranks" * doctest::test_suite("threads")) {
  CHECK_THROWS_WITH_AS(spawn(4,
                             [](int rank) {
                               const DeviceMesh mesh = init_device_mesh({4});
                               const Tensor local = zeros({rank == 2 ? 3 : 2, 3});
                               (void)DTensor::from_local(local, mesh, {Shard{0}}, true);
                             }),
                       doctest::Contains("Inconsistent tensor metadata (including shape and stride) across ranks"),
                       Error);
  // With the global shape given, only dtype and requires_grad must agree: uneven shards pass.
  Failures failures;
  spawn(4, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({4});
    const Tensor local = zeros({rank == 3 ? 1 : 2, 3});
    const Tensor d = DTensor::from_local(local, mesh, {Shard{0}}, true, Sizes{7, 3}, Sizes{3, 1});
    failures.check(d.sizes().vec() == Sizes{7, 3}, rank, "global shape");
  });
  failures.report();
}

TEST_CASE("distribute_tensor then full_tensor gives the tensor back, on 1-D and 2-D meshes, even or not" *
          doctest::test_suite("threads")) {
  Failures failures;
  spawn(4, [&](int rank) {
    const DeviceMesh line = init_device_mesh({4});
    const DeviceMesh square = init_device_mesh({2, 2});
    const std::vector<std::pair<const DeviceMesh*, Placements>> cases = {
        {&line, {Shard{0}}},  {&line, {Shard{1}}},  {&line, {Replicate{}}},
        {&square, {Shard{0}, Shard{1}}}, {&square, {Shard{1}, Shard{0}}}, {&square, {Shard{0}, Shard{0}}},
        {&square, {Replicate{}, Shard{1}}}, {&square, {Shard{1}, Replicate{}}}};
    for (const Sizes& shape : {Sizes{8, 4}, Sizes{5, 3}, Sizes{3, 7}}) {
      const Tensor whole = iota(shape);
      for (const auto& [mesh, ps] : cases) {
        const std::string what = mesh->short_str() + " " + to_string(ps) + " of " + std::to_string(shape[0]) + "x" +
                                 std::to_string(shape[1]);
        const Tensor d = distribute_tensor(whole, *mesh, ps);
        failures.check(d.sizes().vec() == shape, rank, what + ": global shape");
        const Tensor full = full_tensor(d);
        failures.check(!is_dtensor(full) && equal(full, whole), rank, what + ": full_tensor");
      }
    }
  });
  failures.report();
}

TEST_CASE("redistribute's gradient goes back to the input's placements, a Partial one as Replicate" *
          doctest::test_suite("threads")) {
  Failures failures;
  spawn(2, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({2});
    const Tensor whole = iota({4, 3});
    const Tensor weight = add(iota({4, 3}), 1.0);
    // S(0) -> R, then a weighted sum: the gradient of the S(0) leaf is S(0), this rank's rows of weight.
    const Tensor x = distribute_tensor(requires_grad_(whole.clone()), mesh, {Shard{0}});
    const Tensor y = redistribute(x, {Replicate{}});
    failures.check(placements(y) == Placements{Replicate{}} && equal(to_local(y), whole), rank, "S(0) -> R forward");
    const Tensor gx = autograd::grad({mul(to_local(y), weight).sum()}, {x})[0];
    failures.check(is_dtensor(gx) && placements(gx) == Placements{Shard{0}}, rank, "S(0) gradient placements");
    failures.check(equal(to_local(gx), narrow(weight, 0, 2 * rank, 2)), rank, "S(0) gradient values");
    // P -> R sums the ranks' terms; the gradient comes back Replicate (not divided), and from_local
    // returns it as the local gradient of each term.
    const Tensor term = requires_grad_(full({2, 2}, static_cast<double>(rank + 1)));
    const Tensor p = DTensor::from_local(term, mesh, {Partial{}});
    const Tensor r = redistribute(p, {Replicate{}});
    failures.check(equal(to_local(r), full({2, 2}, 3.0)), rank, "P -> R sums");
    const Tensor gp = autograd::grad({mul(to_local(r), 2.0).sum()}, {p}, {}, true)[0];
    failures.check(is_dtensor(gp) && placements(gp) == Placements{Replicate{}}, rank, "P's gradient is Replicate");
    backward(mul(to_local(r), 2.0).sum());
    failures.check(equal(term.grad(), full({2, 2}, 2.0)), rank, "the term's gradient");
  });
  failures.report();
}

TEST_CASE("to_local's grad_placements and full_tensor: the gradient redistributed back" *
          doctest::test_suite("threads")) {
  Failures failures;
  spawn(2, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({2});
    const Tensor weight = iota({4, 3});
    // Each rank's use of a replicated tensor gives a term of its gradient: declared Partial, the terms
    // are summed back to Replicate by from_local's backward (P -> R); undeclared, each rank keeps its own.
    const double factor = rank + 1.0;
    const Tensor x = requires_grad_(zeros({2, 2}));
    backward(mul(to_local(DTensor::from_local(x, mesh, {Replicate{}}), Placements{Partial{}}), factor).sum());
    failures.check(equal(x.grad(), full({2, 2}, 3.0)), rank, "P gradient summed to R");
    const Tensor y = requires_grad_(zeros({2, 2}));
    backward(mul(to_local(DTensor::from_local(y, mesh, {Replicate{}})), factor).sum());
    failures.check(equal(y.grad(), full({2, 2}, factor)), rank, "R gradient kept");
    // full_tensor's gradient reaches an S(0) leaf as S(0).
    const Tensor leaf = distribute_tensor(requires_grad_(iota({4, 3})), mesh, {Shard{0}});
    const Tensor g = autograd::grad({mul(full_tensor(leaf), weight).sum()}, {leaf})[0];
    failures.check(is_dtensor(g) && placements(g) == Placements{Shard{0}}, rank, "full_tensor gradient placements");
    failures.check(equal(to_local(g), narrow(weight, 0, 2 * rank, 2)), rank, "full_tensor gradient values");
  });
  failures.report();
}

TEST_CASE("an op whose inputs need redistribution: mm of two S(0) DTensors equals mm of the tensors" *
          doctest::test_suite("threads")) {
  Failures failures;
  spawn(4, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({4});
    const Tensor a = iota({8, 8}), b = add(iota({8, 4}), -3.0);
    const Tensor da = distribute_tensor(a, mesh, {Shard{0}}), db = distribute_tensor(b, mesh, {Shard{0}});
    const Tensor out = mm(da, db);  // propagation gathers b (S(0) -> R) and keeps a's rows
    failures.check(placements(out) == Placements{Shard{0}}, rank, "mm's output placements");
    failures.check(equal(full_tensor(out), mm(a, b)), rank, "mm's values");
  });
  failures.report();
}

}  // namespace test_dtensor_threads
