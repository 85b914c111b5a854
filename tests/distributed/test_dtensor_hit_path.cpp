// tests/distributed/test_dtensor_hit_path.cpp: the DTensor handler's cached path (Note [The DTensor
// hit path]): a repeated op finds its sharding through a borrowed call (OpCallRef) that hashes and
// compares as the OpSchema it stands for, runs the local op on the caller's borrowed slots or on a
// stack of its own, and wraps its results in the cache's shared output specs.
#include <doctest/doctest.h>

#include <vector>

#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/sharding_propagation.h"
#include "ops/functions.h"
#include "ops/op_table.h"

namespace test_dtensor_hit_path {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TEST_CASE("a repeated op on DTensors is a cache hit whose result shares the cached output spec") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  sharding_propagator().clear_cache();
  const Tensor a = randn({4, 4}), b = randn({4, 4});
  const Tensor da = distribute_tensor(a, mesh, {Replicate{}}), db = distribute_tensor(b, mesh, {Shard{0}});
  const Tensor first = add(da, db), second = add(da, db);
  const ShardingPropagator::CacheStats stats = sharding_propagator().cache_stats();
  CHECK(stats.misses == 1);
  CHECK(stats.hits == 1);
  CHECK(&dtensor_spec(first) == &dtensor_spec(second));  // one spec, shared, not a copy per result
  for (const Tensor* t : {&da, &db, &first})  // the hash each DTensor keeps for the cache
    CHECK(DTensor::of(*t)->spec_hash() == spec_cache_hash(dtensor_spec(*t)));
  CHECK(to_string(dtensor_spec(second)) == "Spec(DM(8), [S(0)], f32[4, 4])");
  CHECK(allclose(to_local(second), add(narrow(a, 0, 0, 1), to_local(db))));
}

TEST_CASE("hits with a plain one-element tensor and with a list of DTensors answer as the first call") {
  FakeWorld world(0, 1);
  const DeviceMesh mesh = init_device_mesh({1});
  sharding_propagator().clear_cache();
  const Tensor a = randn({2, 3}), b = randn({2, 3}), one = scalar_tensor(2.0, TensorOptions{});
  const Tensor da = distribute_tensor(a, mesh, {Replicate{}}), db = distribute_tensor(b, mesh, {Replicate{}});
  for (int i = 0; i < 2; ++i) {
    CHECK(allclose(to_local(mul(da, one)), mul(a, one)));
    CHECK(allclose(to_local(cat({da, db}, 1)), cat({a, b}, 1)));
    CHECK(to_string(placements(cat({da, db}, 1))) == "[R]");
  }
  CHECK(sharding_propagator().cache_stats().misses == 2);
  CHECK(sharding_propagator().cache_stats().hits == 4);
}

TEST_CASE("the identity front answers only a call equal to its entry's key") {
  // Note [The sharding cache's identity front]: the same spec objects with another alpha, equal
  // specs in other objects, a spec that dies and one of other placements, and a cleared cache.
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  sharding_propagator().clear_cache();
  const Tensor a = randn({4, 4}), b = randn({4, 4});
  const Tensor da = distribute_tensor(a, mesh, {Replicate{}});
  Tensor db = distribute_tensor(b, mesh, {Replicate{}});
  for (int i = 0; i < 2; ++i) {
    CHECK(allclose(to_local(add(da, db)), add(a, b)));
    CHECK(allclose(to_local(add(da, db, 2)), add(a, b, 2)));  // same specs, another alpha
  }
  CHECK(sharding_propagator().cache_stats().misses == 2);
  CHECK(sharding_propagator().cache_stats().hits == 2);
  const Tensor db_again = distribute_tensor(b, mesh, {Replicate{}});  // an equal spec, another object
  CHECK(&dtensor_spec(db_again) != &dtensor_spec(db));
  CHECK(allclose(to_local(add(da, db_again, 2)), add(a, b, 2)));
  CHECK(sharding_propagator().cache_stats().hits == 3);
  db = distribute_tensor(b, mesh, {Shard{0}});  // the old spec may die; this one differs
  for (int i = 0; i < 2; ++i) {
    const Tensor sum = add(da, db);
    CHECK(to_string(placements(sum)) == "[S(0)]");
    CHECK(allclose(to_local(sum), add(narrow(a, 0, 0, 2), to_local(db))));
  }
  sharding_propagator().clear_cache();  // the slots go with the map
  CHECK(allclose(to_local(add(da, db_again)), add(a, b)));
  CHECK(sharding_propagator().cache_stats().misses == 1);
  CHECK(sharding_propagator().cache_stats().hits == 0);
}

TEST_CASE("OpCallRef hashes and compares as the OpSchema it builds") {
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8}), other = init_device_mesh({2, 4});
  const DTensorSpec s0{mesh, {Shard{0}}, TensorMeta{{8, 4}, {4, 1}, ScalarType::Float32}};
  const DTensorSpec r{mesh, {Replicate{}}, TensorMeta{{8, 4}, {4, 1}, ScalarType::Float32}};
  const DTensorSpec r2{other, {Replicate{}, Replicate{}}, TensorMeta{{8, 4}, {4, 1}, ScalarType::Float32}};
  const Tensor t = empty({1});
  // cat(Tensor[] tensors, int dim): a list and a value; sum.dim_IntList(self, int[1]? dim, bool keepdim, *, dtype):
  // a spec, an int list, a bool and None.
  const std::vector<IValue> cat_args{IValue(std::vector<Tensor>{t, t}), IValue(std::int64_t{1})};
  const std::vector<IValue> sum_args{IValue(t), IValue(IntArrayRef({0})), IValue(true), IValue()};
  const DTensorSpec* cat_specs[] = {&s0, &r};
  const DTensorSpec* sum_specs[] = {&s0};
  const OpCallRef cat_ref{ops::op("aten::cat"), cat_args.data(), cat_args.size(), cat_specs};
  const OpCallRef sum_ref{ops::op("aten::sum", "dim_IntList"), sum_args.data(), sum_args.size(), sum_specs};
  for (const OpCallRef* ref : {&cat_ref, &sum_ref}) {
    const OpSchema schema = ref->to_schema();
    CHECK(ref->hash() == schema.hash());
    CHECK(*ref == schema);
  }
  CHECK(cat_ref.to_schema().placements_str() == "[S(0)], [R]");
  const std::size_t cat_hashes[] = {spec_cache_hash(s0), spec_cache_hash(r)};  // as DTensors keep them
  CHECK(OpCallRef{cat_ref.op, cat_args.data(), cat_args.size(), cat_specs, cat_hashes}.hash() == cat_ref.hash());
  CHECK_FALSE(cat_ref == sum_ref.to_schema());
  // Any difference in a spec (placements, mesh) or a value makes another key.
  const DTensorSpec* swapped[] = {&r, &s0};
  const DTensorSpec* other_mesh[] = {&s0, &r2};
  CHECK_FALSE(OpCallRef{cat_ref.op, cat_args.data(), cat_args.size(), swapped} == cat_ref.to_schema());
  CHECK_FALSE(OpCallRef{cat_ref.op, cat_args.data(), cat_args.size(), other_mesh} == cat_ref.to_schema());
  const std::vector<IValue> cat_dim0{cat_args[0], IValue(std::int64_t{0})};
  CHECK_FALSE(OpCallRef{cat_ref.op, cat_dim0.data(), cat_dim0.size(), cat_specs} == cat_ref.to_schema());
}

TEST_CASE("the local call borrows the local tensors while the stack alone owns the DTensors") {
  // Boxed calls that own their arguments (as a handler's own calls do): the DTensors' last
  // references are the stack slots, which the handler keeps until the local op has returned.
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  const Tensor a = randn({8, 4}), b = randn({8, 4});
  const Tensor expected = add(narrow(a, 0, 0, 1), narrow(b, 0, 0, 1));  // rank 0's rows
  for (int i = 0; i < 2; ++i) {  // a miss, then a hit
    Stack stack;
    stack.emplace_back(distribute_tensor(a, mesh, {Shard{0}}));
    stack.emplace_back(distribute_tensor(b, mesh, {Replicate{}}));  // redistributed to S(0)
    stack.emplace_back(Scalar(1));
    ops::op("aten::add", "Tensor").call(stack);
    REQUIRE(stack.size() == 1);
    const Tensor out = stack[0].to_tensor();
    CHECK(to_string(dtensor_spec(out)) == "Spec(DM(8), [S(0)], f32[8, 4])");
    CHECK(allclose(to_local(out), expected));
  }
  Stack in_place;  // an in-place op answers self, its local tensor written
  const Tensor self = distribute_tensor(a, mesh, {Shard{0}});
  in_place.emplace_back(self);
  in_place.emplace_back(distribute_tensor(b, mesh, {Shard{0}}));
  in_place.emplace_back(Scalar(1));
  ops::op("aten::add_", "Tensor").call(in_place);
  REQUIRE(in_place.size() == 1);
  CHECK(in_place[0].to_tensor().is_same(self));
  CHECK(allclose(to_local(self), expected));
}

TEST_CASE("a front end's call runs the local op on its own borrowed slots") {
  // Note [The local op runs in place]: the caller's slots are rewritten to borrow the local tensors
  // (a redistributed copy, a value from the redistribute schema), and the caller's DTensors stay
  // as they were.
  FakeWorld world(0, 8);
  const DeviceMesh mesh = init_device_mesh({8});
  const Tensor a = randn({8, 4}), b = randn({8, 4});
  const Tensor da = distribute_tensor(a, mesh, {Shard{0}}), db = distribute_tensor(b, mesh, {Replicate{}});
  for (int i = 0; i < 2; ++i) {  // a miss, then a hit
    const Tensor sum = add(db, da);  // db is redistributed to S(0) first
    CHECK(to_string(dtensor_spec(sum)) == "Spec(DM(8), [S(0)], f32[8, 4])");
    CHECK(allclose(to_local(sum), add(narrow(a, 0, 0, 1), narrow(b, 0, 0, 1))));
    const Tensor viewed = view(da, {8, 2, 2});  // the local op takes its local shape from the schema
    CHECK(to_string(dtensor_spec(viewed)) == "Spec(DM(8), [S(0)], f32[8, 2, 2])");
    CHECK(to_local(viewed).sizes().vec() == std::vector<std::int64_t>{1, 2, 2});
  }
  CHECK(to_string(dtensor_spec(da)) == "Spec(DM(8), [S(0)], f32[8, 4])");  // the arguments as they were
  CHECK(to_string(dtensor_spec(db)) == "Spec(DM(8), [R], f32[8, 4])");
  CHECK(allclose(to_local(db), b));
  const Tensor self = distribute_tensor(a, mesh, {Shard{0}});
  CHECK(add_(self, da).is_same(self));  // an in-place op answers self, its local tensor written
  CHECK(allclose(to_local(self), mul(narrow(a, 0, 0, 1), 2.0)));
}

}  // namespace test_dtensor_hit_path
