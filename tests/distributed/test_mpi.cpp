// tests/distributed/test_mpi.cpp: the MPI backend, run by meson under `mpirun -np 2` and `-np 4`
// (one process per rank): every collective against the single-process reference, data-parallel
// training equal to one process, and (STRATA_DISTRIBUTED_DEBUG=DETAIL) ranks that disagree failing
// alike, all_to_all_single's splits included; a collective returning before the other ranks issue it
// (Note [How MPI collectives make progress]). Its own main starts and stops MPI around doctest;
// finalize_mpi's cases are mpi_finalize_check's.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>
#include <limits>
#include <string>

#include "autograd/backward.h"
#include "distributed/data_parallel.h"
#include "distributed/device_mesh.h"
#include "distributed/functional_collectives.h"
#include "distributed/mpi_backend.h"
#include "distributed/process_group.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "optim/sgd.h"
#include "tests/distributed/collective_inputs.h"
#include "tests/distributed/redistribute_cases.h"
#include "tests/distributed/tensor_parallel_step.h"
#include "tracer/cli/mlp_experiment.h"

using namespace strata;
using namespace strata::distributed;
using testing::input_of;
using testing::same;

namespace {
int world() { return resolve_process_group("0").size(); }
int me() { return resolve_process_group("0").rank(); }
}  // namespace

TEST_CASE("MPI: all_reduce with every reduce op equals the single-process reduction") {
  for (const char* op : {"sum", "avg", "product", "min", "max"})
    for (const std::vector<std::int64_t>& sizes : std::vector<std::vector<std::int64_t>>{{3, 5}, {}, {0, 2}, {7}}) {
      INFO(op, " ", shape_str(sizes));
      const Tensor got = wait_tensor(all_reduce(input_of(me(), sizes), op, "0"));
      CHECK(got.sizes() == IntArrayRef(sizes));
      CHECK(got.to_vector<double>() == testing::reduced(op, world(), numel_of(sizes)));
    }
}

TEST_CASE("MPI: all_reduce_ reduces in place (MPI_IN_PLACE)") {
  const Tensor x = input_of(me(), {5, 3});
  all_reduce_(x, "max", "0");
  CHECK(wait_tensor(x).to_vector<double>() == testing::reduced("max", world(), 15));
}

TEST_CASE("MPI: all_gather, reduce_scatter, all_to_all_single and broadcast equal their references") {
  const int n = world(), rank = me();
  std::vector<Tensor> parts;
  for (int r = 0; r < n; ++r) parts.push_back(contiguous(t(input_of(r, {3, 2}))));
  CHECK(same(wait_tensor(all_gather_into_tensor(t(input_of(rank, {3, 2})), n, "0")), cat(parts, 0)));
  Tensor summed = input_of(0, {2 * n, 2});
  for (int r = 1; r < n; ++r) summed = add(summed, input_of(r, {2 * n, 2}));
  CHECK(same(wait_tensor(reduce_scatter_tensor(input_of(rank, {2 * n, 2}), "sum", n, "0")), narrow(summed, 0, 2 * rank, 2)));
  std::vector<std::int64_t> in_splits, out_splits(static_cast<std::size_t>(n), rank + 1);
  for (int j = 0; j < n; ++j) in_splits.push_back(j + 1);
  std::vector<Tensor> received;
  for (int j = 0; j < n; ++j) received.push_back(narrow(input_of(j, {n * (n + 1) / 2, 2}), 0, rank * (rank + 1) / 2, rank + 1));
  // rank j sends rows [k(k+1)/2, ...) of its input to rank k: k + 1 rows
  CHECK(same(wait_tensor(all_to_all_single(input_of(rank, {n * (n + 1) / 2, 2}), out_splits, in_splits, "0")), cat(received, 0)));
  CHECK(same(wait_tensor(broadcast(input_of(rank, {4}, ScalarType::Int64), n - 1, "0")), input_of(n - 1, {4}, ScalarType::Int64)));
}

TEST_CASE("MPI: waits in another order than the issues complete") {
  const Tensor a = all_reduce(full({3}, me() + 1.0), "sum", "0");
  const Tensor b = all_reduce(full({3}, 10.0 * (me() + 1)), "max", "0");
  if (me() % 2 == 1) (void)wait_tensor(b);  // odd ranks wait for b first, even ranks for a
  CHECK(wait_tensor(a).to_vector<double>() == std::vector<double>(3, world() * (world() + 1) / 2.0));
  CHECK(wait_tensor(b).to_vector<double>() == std::vector<double>(3, 10.0 * world()));
}

TEST_CASE("MPI: data-parallel training ends with the single-process parameters") {
  const tracer::MlpConfig config{0, {16, 32, 32, 4}, 8, 0.1};
  auto train = [&](nn::Module& model, const Tensor& x, const Tensor& y) {
    optim::SGD opt(model.parameters(), optim::SGDOptions{config.lr});
    for (int s = 0; s < 3; ++s) {
      opt.zero_grad();
      backward(nn::functional::cross_entropy(model(x), y));
      opt.step();
    }
  };
  manual_seed(config.seed);
  const auto reference = nn::make_mlp(config.sizes);
  manual_seed(config.seed + 1000 + static_cast<std::uint64_t>(me()));
  auto mine = me() == 0 ? nn::make_mlp(config.sizes) : nn::make_mlp(config.sizes);
  if (me() == 0) {  // rank 0 starts from the reference's parameters; the others get them by broadcast
    manual_seed(config.seed);
    mine = nn::make_mlp(config.sizes);
  }
  const auto [x, y] = tracer::make_batch(config);
  train(*reference, x, y);
  DistributedDataParallel ddp(mine);
  const std::int64_t share = config.batch / world();
  train(ddp, narrow(x, 0, me() * share, share), narrow(y, 0, me() * share, share));
  const auto got = ddp.parameters(), want = reference->parameters();
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(tracer::allclose(got[i], want[i], 1e-6, 1e-6));
}

TEST_CASE("MPI: the tensor-parallel step equals the single-process one; on 4 ranks also (2, 2) dp x tp") {
  const tracer::MlpConfig config;  // the experiment's MLP: sizes 16, 32, 4; batch 8
  const tracer::PlainStep ref = tracer::plain_step(config);
  const auto [x, y] = tracer::make_batch(config);
  testing::RankFailures failures;
  manual_seed(config.seed);
  testing::check_tensor_parallel_step(*nn::make_mlp(config.sizes), init_device_mesh({world()}), ref, x, y, config.lr,
                                      failures, me());
  if (world() == 4) {
    const DeviceMesh mesh = init_device_mesh({2, 2}, {"dp", "tp"});
    const std::int64_t share = config.batch / 2, at = (*mesh.get_coordinate())[0] * share;
    manual_seed(config.seed);
    testing::check_tensor_parallel_step(*nn::make_mlp(config.sizes), mesh.slice("tp"), ref, narrow(x, 0, at, share),
                                        narrow(y, 0, at, share), config.lr, failures, me(), &mesh, 0);
  }
  failures.report();
}

// Rank 0 issues every collective, then tells the others (a point-to-point message) that its calls
// returned; they issue theirs only once they heard. So rank 0's calls return before any other rank
// has issued them, and its waits are where it blocks: their results hold what the others sent after.
// Were an issue to block, rank 0 would never send the message: the others then give up after 20 s,
// fail, and issue anyway, so the job ends (no timing is asserted, only this order). On the world
// (with the suite's STRATA_DISTRIBUTED_DEBUG=DETAIL, whose exchange of descriptions does not block
// either: Note [DETAIL checks without blocking]) and on a group made without DETAIL.
TEST_CASE("MPI: a collective returns before the other ranks issue it; its wait blocks until they have") {
  const char* const detail = std::getenv("STRATA_DISTRIBUTED_DEBUG");
  const std::string saved = detail ? detail : "";
  unsetenv("STRATA_DISTRIBUTED_DEBUG");  // read when a group is made
  std::vector<int> everyone;
  for (int r = 0; r < world(); ++r) everyone.push_back(r);
  const std::string plain = split_group({everyone});
  if (detail) setenv("STRATA_DISTRIBUTED_DEBUG", saved.c_str(), 1);
  const int n = world(), rank = me();
  for (const std::string& group : {std::string("0"), plain}) {
    INFO("group ", group);
    constexpr int kTag = 29;
    int token = 1;
    std::vector<Tensor> outs;
    if (rank == 0) {
      outs = testing::issue_each_collective(rank, n, group);
      mpi_progress();  // tests the pending collectives; it never blocks either
      for (int r = 1; r < n; ++r) MPI_Send(&token, 1, MPI_INT, r, kTag, MPI_COMM_WORLD);
    } else {
      MPI_Request heard;
      MPI_Irecv(&token, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, &heard);
      int done = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!done && std::chrono::steady_clock::now() < deadline) {
        MPI_Test(&heard, &done, MPI_STATUS_IGNORE);
        if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      CHECK_MESSAGE(done, "rank 0's collectives did not return before the other ranks issued theirs");
      outs = testing::issue_each_collective(rank, n, group);
      if (!done) MPI_Wait(&heard, MPI_STATUS_IGNORE);
    }
    const std::vector<Tensor> expected = testing::each_collective_expected(rank, n);
    for (std::size_t i = 0; i < outs.size(); ++i) CHECK(same(wait_tensor(outs[i]), expected[i]));
  }
}

TEST_CASE("MPI with STRATA_DISTRIBUTED_DEBUG=DETAIL: ranks that disagree all get the same error") {
  std::string message;
  try {
    wait_tensor(all_reduce(ones({me() + 2}), "sum", "0"));
  } catch (const Error& e) {
    message = e.what();
  }
  // (The collective's number counts the ones the earlier cases ran.)
  // Thrown at the wait, as on threads (Note [DETAIL checks without blocking]).
  const std::string head = "[_c10d_functional::wait_tensor] all_reduce (collective #";
  const std::string tail = "): rank 0's tensor has sizes [2] but rank 1's has [3]";
  CHECK(message.rfind(head, 0) == 0);
  CHECK(message.size() > tail.size());
  CHECK(message.substr(message.size() - tail.size()) == tail);
}

TEST_CASE("MPI with STRATA_DISTRIBUTED_DEBUG=DETAIL: all_to_all_single splits and rows are compared across ranks") {
  const int n = world();
  auto error_of = [](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string head = "[_c10d_functional::wait_tensor] all_to_all_single (collective #";
  // Rank 0 expects two rows from rank 1 and none from itself; every rank sends one row to each.
  std::vector<std::int64_t> out(static_cast<std::size_t>(n), 1), in(static_cast<std::size_t>(n), 1);
  if (me() == 0) out[0] = 0, out[1] = 2;
  std::string message = error_of([&] { wait_tensor(all_to_all_single(ones({n, 2}), out, in, "0")); });
  CHECK(message.rfind(head, 0) == 0);
  CHECK(ends_with(message, "): rank 0 sends 1 rows to rank 0, which expects 0"));
  message = error_of([&] { wait_tensor(all_to_all_single(ones({n, me() + 1}), {}, {}, "0")); });
  CHECK(message.rfind(head, 0) == 0);
  CHECK(ends_with(message, "): rank 0's tensor has sizes [" + std::to_string(n) + ", 1] but rank 1's has [" +
                               std::to_string(n) + ", 2] (all but the first must match)"));
}

TEST_CASE("MPI: int64 all_reduce sum and product wrap around as two's complement") {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> sum_in{me() == 0 ? max : me() == 1 ? 1 : 0};
  const std::vector<std::int64_t> product_in{me() == 0 ? std::int64_t{1} << 62 : me() == 1 ? 4 : 1};
  CHECK(wait_tensor(all_reduce(tensor(sum_in), "sum", "0")).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
  CHECK(wait_tensor(all_reduce(tensor(product_in), "product", "0")).to_vector<std::int64_t>() == std::vector<std::int64_t>{0});
}

TEST_CASE("MPI: split_group makes a 2-D mesh's rows and columns") {
  if (world() != 4) return;  // the mesh needs four ranks
  const std::string rows = split_group({{0, 1}, {2, 3}}), cols = split_group({{0, 2}, {1, 3}});
  const Tensor mine = full({2}, static_cast<double>(me() + 1));
  const double row_sum = me() < 2 ? 3 : 7, col_sum = me() % 2 == 0 ? 4 : 6;
  CHECK(wait_tensor(all_reduce(mine, "sum", rows)).to_vector<double>() == std::vector<double>{row_sum, row_sum});
  CHECK(wait_tensor(all_reduce(mine, "sum", cols)).to_vector<double>() == std::vector<double>{col_sum, col_sum});
  CHECK(resolve_process_group(cols).rank() == me() / 2);
}

TEST_CASE("MPI: device meshes over the world: the whole world in 1-D, a (2, 2) mesh's groups in PyTorch's order") {
  const DeviceMesh line = init_device_mesh({world()});
  CHECK(line.group_name(0) == "0");
  CHECK(line.get_local_rank() == me());
  if (world() != 4) return;
  std::vector<int> everyone{0, 1, 2, 3};
  const int base = std::stoi(split_group({everyone}));  // the names made so far differ with the cases run
  const DeviceMesh mesh = init_device_mesh({2, 2});
  const int i = me() / 2, j = me() % 2;
  CHECK(*mesh.get_coordinate() == std::vector<std::int64_t>{i, j});
  CHECK(mesh.group_name(0) == std::to_string(base + 1 + j));  // columns [0, 2], [1, 3]
  CHECK(mesh.group_name(1) == std::to_string(base + 3 + i));  // rows [0, 1], [2, 3]
  const Tensor mine = full({1}, static_cast<double>(me()));
  CHECK(wait_tensor(all_reduce(mine, "sum", mesh.group_name(0))).item<float>() == static_cast<float>(2 + 2 * j));
  CHECK(wait_tensor(all_reduce(mine, "sum", mesh.group_name(1))).item<float>() == static_cast<float>(1 + 4 * i));
  CHECK(mesh.get_local_rank(0) == i);
  CHECK(mesh.get_local_rank(1) == j);
}

TEST_CASE("MPI: redistribution between placements of a (2, 2) mesh and of the world equals the target's shards") {
  // The thread suite runs every pair; here the collectives of each transform run on MPI (all_gather,
  // reduce_scatter, all_reduce, shard_dim_alltoall's all-to-all), with uneven and empty shards.
  const Placement s0 = Shard{0}, s1 = Shard{1}, r = Replicate{}, p = Partial{};
  const DeviceMesh line = init_device_mesh({world()});
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{5, 7}, {8, 4}})
    for (const Placements& src : std::vector<Placements>{{s0}, {s1}, {r}, {p}})
      for (const Placements& dst : std::vector<Placements>{{s0}, {s1}, {r}, {p}}) {
        if (!testing::supported(src, dst)) continue;
        CAPTURE(to_string(src) + " -> " + to_string(dst) + " of " + shape_str(shape));
        CHECK(testing::redistribution_error(line, testing::global_tensor(shape), src, dst) == "");
      }
  if (world() != 4) return;
  const DeviceMesh mesh = init_device_mesh({2, 2});
  for (const Placements& src : std::vector<Placements>{{s0, s0}, {p, s1}, {r, p}, {s1, s0}})
    for (const Placements& dst : std::vector<Placements>{{r, s0}, {s1, s1}, {s0, s1}, {r, r}}) {
      CAPTURE(to_string(src) + " -> " + to_string(dst));
      CHECK(testing::redistribution_error(mesh, testing::global_tensor({5, 3}), src, dst) == "");
    }
}

int main(int argc, char** argv) {
  init_mpi(&argc, &argv);
  doctest::Context context(argc, argv);
  const int failed = context.run();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  finalize_mpi();
  return any;
}
