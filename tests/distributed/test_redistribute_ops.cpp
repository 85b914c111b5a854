// tests/distributed/test_redistribute_ops.cpp: what a redistribution runs, as DebugMode logs it (the
// plain-tensor ops and collectives), on a fake world (one process acting as one rank): the DTensor
// DebugMode seed's two redistributions on a (4, 2) mesh over a world of 8 as rank 1, the plans of
// gen_transform_infos (nested sharding, logical shapes), async_op, backward, and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/dispatch/local_dispatch_keys.h"
#include "core/util/error.h"
#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/fake_process_group.h"
#include "distributed/redistribute.h"
#include "distributed/shard_dim_alltoall.h"
#include "modes/debug_mode.h"
#include "ops/functions.h"
#include "tests/distributed/redistribute_cases.h"

namespace test_redistribute_ops {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;
using testing::spec_of;
using tracer::DebugMode;
using tracer::DebugModeOptions;

namespace {
using Sizes = std::vector<std::int64_t>;

// The log of redistributing `local` from `src` to `dst`, without outputs.
std::string log_of(const Tensor& local, const DTensorSpec& src, const DTensorSpec& dst, Tensor* result = nullptr) {
  DebugModeOptions options;
  options.record_output = false;
  DebugMode mode(options);
  {
    DebugMode::Guard guard(mode);
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // where a DTensor's handler runs
    Tensor out = redistribute_local_tensor(local, src, dst);
    if (result != nullptr) *result = out;
  }
  return mode.debug_string();
}

// Whether `log` shows chunk as aten::chunk, where chunk reaches modes below Autograd, else as the
// split.Tensor it decomposes to before dispatch; then the chunk of an async collective tensor is a
// view, which keeps it wrapped, and the clone of the wrapper is not logged. Either way the whole
// log is compared.
bool chunk_dispatches(const std::string& log) { return log.find("aten::chunk(") != std::string::npos; }

std::string plan_str(const std::vector<TransformInfo>& infos) {
  std::string s;
  for (const TransformInfo& i : infos)
    s += std::to_string(i.mesh_dim) + ":" + to_string(i.src) + "->" + to_string(i.dst) + shape_str(i.logical_shape) + " ";
  return s;
}

const Placement kS0 = Shard{0};
const Placement kS1 = Shard{1};
const Placement kS2 = Shard{2};
const Placement kR = Replicate{};
const Placement kP = Partial{};
}  // namespace

TEST_CASE("the seed's redistributions on a (4, 2) mesh over a fake world of 8, as rank 1") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  // bmm's first input, [P, R] -> [S(2), S(2)]: reduce_scatter on group "2" (mesh dim 0), then a chunk.
  Tensor out;
  const std::string first =
      log_of(ones({1, 96, 8}), spec_of(mesh, {kP, kR}, {1, 96, 8}), spec_of(mesh, {kS2, kS2}, {1, 96, 8}), &out);
  CHECK(out.sizes() == IntArrayRef({1, 96, 1}));
  CHECK(AsyncCollectiveTensor::of(out) == nullptr);
  const std::string cat4 = "    aten::cat(['t: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]'])\n";
  const std::string scatter = "    _c10d_functional::reduce_scatter_tensor(t: f32[4, 96, 2], sum, 4, 2)";
  if (chunk_dispatches(first)) {
    CHECK(first == "    aten::chunk(t: f32[1, 96, 8], 4, 2)\n" + cat4 + scatter + "\n    aten::clone(t: f32[1, 96, 1])");
  } else {
    CHECK(first == "    aten::split.Tensor(t: f32[1, 96, 8], 2, 2)\n" + cat4 + scatter);
  }
  // bmm's second input, [R, P] -> [S(1), S(1)]: chunk and clone, then reduce_scatter on group "3",
  // and the wait of the result (it is an AsyncCollectiveTensor).
  const std::string second =
      log_of(ones({1, 8, 16}), spec_of(mesh, {kR, kP}, {1, 8, 16}), spec_of(mesh, {kS1, kS1}, {1, 8, 16}), &out);
  CHECK(out.sizes() == IntArrayRef({1, 1, 16}));
  const std::string tail = "    aten::clone(t: f32[1, 2, 16])\n";
  const std::string rest = "    aten::cat(['t: f32[1, 1, 16]', 't: f32[1, 1, 16]'])\n"
                           "    _c10d_functional::reduce_scatter_tensor(t: f32[2, 1, 16], sum, 2, 3)\n"
                           "    _c10d_functional::wait_tensor(t: f32[1, 1, 16])";
  if (chunk_dispatches(second)) {
    CHECK(second == "    aten::chunk(t: f32[1, 8, 16], 4, 1)\n" + tail + "    aten::chunk(t: f32[1, 2, 16], 2, 1)\n" + rest);
  } else {
    CHECK(second == "    aten::split.Tensor(t: f32[1, 8, 16], 2, 1)\n" + tail +
                        "    aten::split.Tensor(t: f32[1, 2, 16], 1, 1)\n" + rest);
  }
}

TEST_CASE("RedistributeWait::AfterEachStep waits for each step's collective, as upstream does today") {
  // Note [When a redistribution waits]: the reduce_scatter's result is waited for before the next
  // step, whose chunk then runs on the plain tensor, in the log.
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  Tensor out;
  std::string log;
  {
    const RedistributeWaitGuard each(RedistributeWait::AfterEachStep);
    CHECK(redistribute_wait() == RedistributeWait::AfterEachStep);
    log = log_of(ones({1, 96, 8}), spec_of(mesh, {kP, kR}, {1, 96, 8}), spec_of(mesh, {kS2, kS2}, {1, 96, 8}), &out);
  }
  CHECK(redistribute_wait() == RedistributeWait::AfterLastStep);
  CHECK(out.sizes() == IntArrayRef({1, 96, 1}));
  CHECK(log == "    aten::chunk(t: f32[1, 96, 8], 4, 2)\n"
               "    aten::cat(['t: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]', 't: f32[1, 96, 2]'])\n"
               "    _c10d_functional::reduce_scatter_tensor(t: f32[4, 96, 2], sum, 4, 2)\n"
               "    _c10d_functional::wait_tensor(t: f32[1, 96, 2])\n"
               "    aten::chunk(t: f32[1, 96, 2], 2, 2)\n"
               "    aten::clone(t: f32[1, 96, 1])");
  // async_op leaves every result wrapped, whatever the choice
  const RedistributeWaitGuard each(RedistributeWait::AfterEachStep);
  const Tensor gathered = redistribute_local_tensor(ones({1, 32}), spec_of(mesh, {kS0, kR}, {4, 32}),
                                                    spec_of(mesh, {kR, kR}, {4, 32}), /*async_op=*/true);
  CHECK(AsyncCollectiveTensor::of(gathered) != nullptr);
}

// The unpadding is narrow, a composite op: below Autograd it reaches the AsyncCollectiveTensor as
// aten::narrow, which upstream's _is_view_op does not count as a view (CompositeImplicitAutograd), so
// the wrapper waits inside its own handler, unseen by the mode, and no wait is left for the end.
TEST_CASE("uneven shards are padded for the collective and unpadded by narrow, which waits unseen") {
  FakeWorld world(3, 4);  // 5 rows over 4 ranks: rank 3's shard is empty, padded to 2 rows
  const DeviceMesh line = init_device_mesh({4});
  Tensor out;
  const std::string gather =
      log_of(ones({0, 3}), spec_of(line, {kS0}, {5, 3}), spec_of(line, {kR}, {5, 3}), &out);
  CHECK(out.sizes() == IntArrayRef({5, 3}));
  CHECK(gather ==
        "    aten::constant_pad_nd(t: f32[0, 3], [0, 0, 0, 2])\n"
        "    _c10d_functional::all_gather_into_tensor(t: f32[2, 3], 4, 0)");
  // [R] -> [S(1)] of 7 columns: rank 3 clones its last column; P -> S(1) pads each chunk to 2.
  CHECK(log_of(ones({5, 7}), spec_of(line, {kR}, {5, 7}), spec_of(line, {kS1}, {5, 7}), &out).find(
            "aten::clone(t: f32[5, 1])") != std::string::npos);
  const std::string scatter = log_of(ones({5, 7}), spec_of(line, {kP}, {5, 7}), spec_of(line, {kS1}, {5, 7}), &out);
  CHECK(out.sizes() == IntArrayRef({5, 1}));
  CHECK(scatter.find("aten::constant_pad_nd(t: f32[5, 1], [0, 1])") != std::string::npos);
  CHECK(scatter.find("_c10d_functional::reduce_scatter_tensor(t: f32[20, 2], sum, 4, 0)") != std::string::npos);
}

TEST_CASE("plans: one step per changed mesh dimension, nested sharding replicated first, logical shapes") {
  FakeWorld world(3, 4);  // coordinate (1, 1) on a (2, 2) mesh
  const DeviceMesh mesh = init_device_mesh({2, 2});
  const auto plan = [&](const Placements& a, const Placements& b, const Sizes& shape) {
    return plan_str(gen_transform_infos(spec_of(mesh, a, shape), spec_of(mesh, b, shape)));
  };
  CHECK(plan({kR, kP}, {kS1, kS1}, {1, 8, 16}) == "0:R->S(1)[1, 8, 16] 1:P->S(1)[1, 8, 16] ");
  // [S(0), S(0)] -> [R, S(0)]: mesh dim 1 is sharded after dim 0 in the source but first in the
  // target, so it is gathered first (logical shape: what dim 0's shard leaves, 2 of 5 rows at
  // coordinate 1), then dim 0, then dim 1 is sharded again.
  CHECK(plan({kS0, kS0}, {kR, kS0}, {5, 3}) == "1:S(0)->R[2, 3] 0:S(0)->R[5, 3] 1:R->S(0)[2, 3] ");
  // [S(0), S(1)] -> [S(1), S(0)]: dim 1's target S(0) follows a dim 0 that shards 0 in the source
  // only, so dim 1 is gathered first, then dim 0 moves by all-to-all, then dim 1 is sharded again.
  CHECK(plan({kS0, kS1}, {kS1, kS0}, {4, 6}) == "1:S(1)->R[2, 6] 0:S(0)->S(1)[4, 6] 1:R->S(0)[2, 6] ");
  CHECK(plan({kS0, kR}, {kS1, kR}, {4, 6}) == "0:S(0)->S(1)[4, 6] ");
  CHECK(plan({kS0, kR}, {kS0, kR}, {4, 6}).empty());
  const DeviceMesh line = init_device_mesh({4});
  CHECK(plan_str(gen_transform_infos(spec_of(line, {kR}, {4}), spec_of(line, {kR}, {4}))) == "0:R->R[4] ");
}

TEST_CASE("a cached plan is this rank's: one thread acting as two ranks of one mesh in turn") {
  // [S(0), S(0)] -> [S(0), R] of 5 rows: mesh dim 1 gathers what dim 0's shard left, 3 rows at
  // coordinate (0, 0) and 2 at (1, 1); a plan cached for the first rank would give the second 3.
  const auto gathered_rows = [](int rank, std::int64_t local_rows) {
    FakeWorld world(rank, 4);
    const DeviceMesh mesh = init_device_mesh({2, 2});
    return redistribute_local_tensor(ones({local_rows, 3}), spec_of(mesh, {kS0, kS0}, {5, 3}),
                                     spec_of(mesh, {kS0, kR}, {5, 3}))
        .size(0);
  };
  CHECK(gathered_rows(0, 2) == 3);
  CHECK(gathered_rows(3, 1) == 2);
  CHECK(gathered_rows(0, 2) == 3);
}

TEST_CASE("redistribute: async_op keeps the collective's wrapper, a rank outside the mesh keeps its tensor") {
  FakeWorld world(0, 4);
  const DeviceMesh line = init_device_mesh({4});
  const Tensor local = ones({2, 3});
  const Tensor out = redistribute_local_tensor(local, spec_of(line, {kS0}, {8, 3}), spec_of(line, {kR}, {8, 3}), true);
  REQUIRE(AsyncCollectiveTensor::of(out) != nullptr);
  CHECK(out.sizes() == IntArrayRef({8, 3}));
  // R -> P(sum) divides; in backward it keeps the value, and S -> P gathers.
  const DTensorSpec r = spec_of(line, {kR}, {8, 3});
  const DTensorSpec p = spec_of(line, {kP}, {8, 3});
  CHECK(redistribute_local_tensor(full({8, 3}, 2.0), r, p).equal(full({8, 3}, 0.5)));
  CHECK(redistribute_local_tensor(full({8, 3}, 2.0), r, p, false, true).equal(full({8, 3}, 2.0)));
  CHECK(redistribute_local_tensor(local, spec_of(line, {kS0}, {8, 3}), p, false, true).sizes() == IntArrayRef({8, 3}));
  const DeviceMesh part({2}, {2, 3});  // rank 0 is not in it
  CHECK(!part.get_coordinate().has_value());
  CHECK(redistribute_local_tensor(local, spec_of(part, {kS0}, {4, 3}), spec_of(part, {kR}, {4, 3})).equal(local));
}

TEST_CASE("redistribute and shard_dim_alltoall errors") {
  FakeWorld world(0, 4);
  const DeviceMesh line = init_device_mesh({4});
  const DeviceMesh square = init_device_mesh({2, 2});
  const Tensor local = ones({2, 3});
  CHECK_THROWS_WITH_AS(redistribute_local_tensor(local, spec_of(line, {kS0}, {8, 3}), spec_of(line, {kP}, {8, 3})),
                       "redistribute from S(0) to P not supported yet", Error);
  CHECK_THROWS_WITH_AS(redistribute_local_tensor(local, spec_of(line, {kR}, {8, 3}), spec_of(square, {kR, kR}, {8, 3})),
                       "Cross device mesh comm not supported yet! (from DM(4) to DM(2, 2))", Error);
  CHECK_THROWS_WITH_AS(redistribute_local_tensor(local, spec_of(square, {kR}, {8, 3}), spec_of(square, {kR, kR}, {8, 3})),
                       "redistribute: the current placements [R] are not one per dimension of the mesh DM(2, 2)", Error);
  CHECK_THROWS_WITH_AS(redistribute_local_tensor(local, spec_of(line, {kS2}, {8, 3}), spec_of(line, {kR}, {8, 3})),
                       "redistribute: the current placement S(2) is not a dimension of the tensor of shape [8, 3]", Error);
  CHECK_THROWS_WITH_AS(
      redistribute_local_tensor(local, spec_of(line, {kR}, {8, 3}), spec_of(line, {Partial{ReduceOp::Product}}, {8, 3})),
      "Replicate to Partial(product) conversion is not supported.", Error);
  CHECK_THROWS_WITH_AS(shard_dim_alltoall(ones({2, 6}), 0, 2, "0"),
                       "[_dtensor::shard_dim_alltoall] gather_dim 0 and shard_dim 2 must be dimensions of the input, of shape [2, 6]", Error);
  CHECK_THROWS_WITH_AS(shard_dim_alltoall(ones({2, 6}), 0, 0, "0"),
                       "[_dtensor::shard_dim_alltoall] the shard_dim of the shard_dim_alltoall input (2) is not divisible by the group size (4)", Error);
  CHECK(shard_dim_alltoall(ones({2, 8}), 0, 1, "0").sizes() == IntArrayRef({8, 2}));
}

TEST_CASE("_dtensor::shard_dim_alltoall is a dispatched op with upstream's schema") {
  FakeWorld world(0, 2);
  DebugModeOptions options;
  options.record_output = false;
  DebugMode mode(options);
  {
    DebugMode::Guard guard(mode);
    (void)shard_dim_alltoall(ones({2, 4}), 0, 1, "0");
  }
  CHECK(mode.debug_string() == "    aten::ones([2, 4])\n    _dtensor::shard_dim_alltoall(t: f32[2, 4], 0, 1, 0)");
  CHECK(Dispatcher::singleton().find_or_throw("_dtensor::shard_dim_alltoall").schema().text() ==
        "shard_dim_alltoall(Tensor input, int gather_dim, int shard_dim, str group_name) -> Tensor");
}

}  // namespace test_redistribute_ops
