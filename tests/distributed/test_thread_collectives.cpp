// tests/distributed/test_thread_collectives.cpp: the functional collectives on the thread backend,
// each against a single-process reference (odd sizes, 0-d and empty tensors, non-contiguous inputs),
// issues that return before the other ranks join, completion only at wait_tensor, per-rank dispatch
// modes seeing the collectives as ops, and the fault cases: a rank that throws, ranks that disagree,
// a timeout, bad names and sizes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "distributed/autograd_collectives.h"
#include "distributed/data_parallel.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"
#include "tests/distributed/collective_inputs.h"
#include "tests/test_helpers.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "optim/sgd.h"
#include "modes/op_counter.h"
#include "tracer/cli/mlp_experiment.h"

namespace test_thread_collectives {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {

using testing::input_of;
using testing::same;
using testing::values_of;

TensorOptions of_dtype(ScalarType t) {
  TensorOptions o;
  o.dtype = t;
  return o;
}

}  // namespace

TEST_CASE("all_reduce gives every rank the reduction of all inputs, for every reduce op" * doctest::test_suite("threads")) {
  for (const int world : {1, 2, 4}) {
    for (const char* op : {"sum", "avg", "product", "min", "max"}) {
      for (const std::vector<std::int64_t>& sizes : std::vector<std::vector<std::int64_t>>{{3, 5}, {}, {0, 2}, {7}}) {
        INFO("world ", world, " op ", op, " sizes ", shape_str(sizes));
        const std::vector<double> expected = testing::reduced(op, world, numel_of(sizes));
        std::vector<Tensor> got(static_cast<std::size_t>(world));
        spawn(world, [&](int rank) { got[static_cast<std::size_t>(rank)] = wait_tensor(all_reduce(input_of(rank, sizes), op, "0")); });
        for (const Tensor& g : got) {
          CHECK(g.sizes() == IntArrayRef(sizes));
          CHECK(g.to_vector<double>() == expected);
        }
      }
    }
  }
}

TEST_CASE("all_gather, reduce_scatter, all_to_all_single and broadcast equal their single-process references" * doctest::test_suite("threads")) {
  const int world = 3;
  std::vector<Tensor> gathered(world), scattered(world), exchanged(world), broadcasted(world), int_sum(world);
  spawn(world, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    // a non-contiguous input: the transpose of a [3, 2]
    gathered[r] = wait_tensor(all_gather_into_tensor(t(input_of(rank, {3, 2})), world, "0"));
    scattered[r] = wait_tensor(reduce_scatter_tensor(input_of(rank, {6, 2}), "sum", world, "0"));
    // rank r sends r + 1 rows to each rank... uneven splits: rank j receives (r + 1) rows from each r
    std::vector<std::int64_t> in_splits(world, rank + 1), out_splits;
    for (int j = 0; j < world; ++j) out_splits.push_back(j + 1);
    exchanged[r] = wait_tensor(all_to_all_single(input_of(rank, {world * (rank + 1), 2}), out_splits, in_splits, "0"));
    broadcasted[r] = wait_tensor(broadcast(input_of(rank, {4}, ScalarType::Int64), 2, "0"));
    int_sum[r] = wait_tensor(all_reduce(input_of(rank, {5}, ScalarType::Int64), "sum", "0"));
  });
  std::vector<Tensor> parts;
  for (int r = 0; r < world; ++r) parts.push_back(contiguous(t(input_of(r, {3, 2}))));
  const Tensor all_gathered = cat(parts, 0);
  const Tensor summed = add(add(input_of(0, {6, 2}), input_of(1, {6, 2})), input_of(2, {6, 2}));
  for (int r = 0; r < world; ++r) {
    INFO("rank ", r);
    const auto i = static_cast<std::size_t>(r);
    CHECK(same(gathered[i], all_gathered));
    CHECK(same(scattered[i], narrow(summed, 0, 2 * r, 2)));
    std::vector<Tensor> received;
    for (int j = 0; j < world; ++j) received.push_back(narrow(input_of(j, {world * (j + 1), 2}), 0, r * (j + 1), j + 1));
    CHECK(same(exchanged[i], cat(received, 0)));
    CHECK(same(broadcasted[i], input_of(2, {4}, ScalarType::Int64)));
    CHECK(same(int_sum[i], add(add(input_of(0, {5}, ScalarType::Int64), input_of(1, {5}, ScalarType::Int64)),
                               input_of(2, {5}, ScalarType::Int64))));
  }
}

TEST_CASE("a collective completes only at wait_tensor, and its input may be reused once it is waited for" * doctest::test_suite("threads")) {
  std::atomic<bool> rank1_issued{false};
  Tensor result;
  spawn(2, [&](int rank) {
    Tensor x = full({4}, static_cast<double>(rank + 1));
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      rank1_issued = true;
    }
    const Tensor out = all_reduce(x, "sum", "0");
    const Tensor done = wait_tensor(out);
    fill_(x, 100.0);  // the collective is done with x: no rank reads it any more
    if (rank == 0) {
      CHECK(rank1_issued.load());  // wait_tensor returned only after every rank joined
      CHECK(done.impl() == out.impl());  // and returns its argument itself
      result = done;
    }
  });
  CHECK(same(result, full({4}, 3.0)));
}

// Rank 0 issues every collective and only then lets the other ranks issue theirs (a flag), so its
// calls return before any other rank joined, and its waits are where it blocks. Were an issue to
// block, the flag would never be set: the others give up after 20 s, fail, and issue anyway.
TEST_CASE("a collective returns before the other ranks issue it; its wait blocks until they have" * doctest::test_suite("threads")) {
  for (const int world : {2, 4}) {
    INFO("world ", world);
    std::mutex mutex;
    std::condition_variable changed;
    bool rank0_returned = false, heard_in_time = true;
    std::vector<std::vector<Tensor>> got(static_cast<std::size_t>(world));
    spawn(world, [&](int rank) {
      auto issue_all = [&] { return testing::issue_each_collective(rank, world, "0"); };
      std::vector<Tensor> outs;
      if (rank == 0) {
        outs = issue_all();
        const std::lock_guard<std::mutex> lock(mutex);
        rank0_returned = true;
        changed.notify_all();
      } else {
        std::unique_lock<std::mutex> lock(mutex);
        if (!changed.wait_for(lock, std::chrono::seconds(20), [&] { return rank0_returned; })) heard_in_time = false;
        lock.unlock();
        outs = issue_all();
      }
      for (Tensor& o : outs) o = wait_tensor(o);
      got[static_cast<std::size_t>(rank)] = outs;
    });
    CHECK_MESSAGE(heard_in_time, "rank 0's collectives did not return before the other ranks issued theirs");
    for (int rank = 0; rank < world; ++rank) {
      const std::vector<Tensor>& outs = got[static_cast<std::size_t>(rank)];
      const std::vector<Tensor> expected = testing::each_collective_expected(rank, world);
      for (std::size_t i = 0; i < outs.size(); ++i) CHECK(same(outs[i], expected[i]));
    }
  }
}

TEST_CASE("each rank's dispatch modes see its collectives as ops" * doctest::test_suite("threads")) {
  std::vector<std::vector<std::string>> seen(2);
  spawn(2, [&](int rank) {
    tracer::OpCounter counter;
    {
      const ModeGuard guard(counter);
      const Tensor y = wait_tensor(all_reduce(ones({2}), "sum", "0"));
      (void)wait_tensor(all_gather_into_tensor(y, 2, "0"));
    }
    seen[static_cast<std::size_t>(rank)] = counter.sequence("forward");
  });
  const std::vector<std::string> expected{"aten.ones.default", "_c10d_functional.all_reduce.default", "_c10d_functional.wait_tensor.default",
                                          "_c10d_functional.all_gather_into_tensor.default",
                                          "_c10d_functional.wait_tensor.default"};
  CHECK(seen[0] == expected);
  CHECK(seen[1] == expected);
}

TEST_CASE("a rank that throws fails the others' collectives and spawn raises its error" * doctest::test_suite("threads")) {
  std::mutex m;
  std::vector<std::string> others;
  CHECK_THROWS_WITH_AS(spawn(3,
                             [&](int rank) {
                               if (rank == 1) throw Error("boom");
                               try {
                                 wait_tensor(all_reduce(ones({2}), "sum", "0"));
                               } catch (const Error& e) {
                                 const std::lock_guard<std::mutex> lock(m);
                                 others.push_back(e.what());
                                 throw;
                               }
                             }),
                       "spawn: rank 1 failed: boom", Error);
  REQUIRE(others.size() == 2);
  for (const std::string& e : others) CHECK(e == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '0') cannot complete: rank 1 failed: boom");
}

TEST_CASE("ranks that disagree get the same clear error on every rank" * doctest::test_suite("threads")) {
  auto errors_of = [](const std::function<void(int)>& fn) {
    std::mutex m;
    std::vector<std::string> errors;
    try {
      spawn(2, [&](int rank) {
        try {
          fn(rank);
        } catch (const Error& e) {
          const std::lock_guard<std::mutex> lock(m);
          errors.push_back(e.what());
        }
      });
    } catch (const Error&) {
    }
    return errors;
  };
  auto all = [](const std::vector<std::string>& errors, const std::string& message) {
    CHECK(errors.size() == 2);
    for (const std::string& e : errors) CHECK(e == "[_c10d_functional::wait_tensor] " + message);
  };
  all(errors_of([](int rank) { wait_tensor(all_reduce(ones({rank + 2}), "sum", "0")); }),
      "all_reduce (collective #0): rank 0's tensor has sizes [2] but rank 1's has [3]");
  all(errors_of([](int rank) { wait_tensor(all_reduce(ones({2}, of_dtype(rank ? ScalarType::Float64 : ScalarType::Float32)), "sum", "0")); }),
      "all_reduce (collective #0): rank 0's tensor is float32 but rank 1's is float64");
  all(errors_of([](int rank) {
        wait_tensor(rank ? broadcast(ones({2}), 0, "0") : all_reduce(ones({2}), "sum", "0"));
      }),
      "collective #0: rank 0 called all_reduce but rank 1 called broadcast (every rank must call the same collectives in "
      "the same order)");
  all(errors_of([](int rank) { wait_tensor(all_reduce(ones({2}), rank ? "max" : "sum", "0")); }),
      "all_reduce (collective #0): rank 0 reduces with sum but rank 1 with max");
}

TEST_CASE("a collective a rank never joins times out, or fails once that rank has returned" * doctest::test_suite("threads")) {
  std::string error, late;
  std::mutex m;
  auto record = [&](const Error& e) {
    const std::lock_guard<std::mutex> lock(m);
    error = e.what();
  };
  spawn(
      2,
      [&](int rank) {
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          try {  // late: rank 0 gave up on collective #0 already, so it cannot complete here either
            wait_tensor(all_reduce(ones({1}), "sum", "0"));
          } catch (const Error& e) {
            const std::lock_guard<std::mutex> lock(m);
            late = e.what();
          }
          return;
        }
        try {
          wait_tensor(all_reduce(ones({1}), "sum", "0"));
        } catch (const Error& e) {
          record(e);
        }
      },
      SpawnOptions{std::chrono::milliseconds(50)});
  CHECK(error == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '0') timed out after 50 ms waiting for rank 1");
  CHECK(late == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '0') cannot complete: rank 0 timed out "
                "waiting for it");
  error.clear();
  // The job fails too (Note [A round completes once every rank has issued it]), though rank 0 caught it.
  CHECK_THROWS_WITH_AS(spawn(2,
                             [&](int rank) {
                               if (rank == 1) return;  // never joins
                               try {
                                 wait_tensor(all_reduce(ones({1}), "sum", "0"));
                               } catch (const Error& e) {
                                 record(e);
                               }
                             }),
                       "spawn: all_reduce (collective #0 on group '0'): rank 1 returned without joining it", Error);
  CHECK(error == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '0'): rank 1 returned without joining it");
}

TEST_CASE("a group's all_to_all_single with no splits exchanges equal pieces; splits of the wrong length are refused" * doctest::test_suite("threads")) {
  const int world = 2;
  std::vector<Tensor> exchanged(world);
  std::vector<std::string> errors(world);
  spawn(world, [&](int rank) {
    ProcessGroup& group = resolve_process_group("0");
    const Tensor input = input_of(rank, {4, 3});
    const Tensor out = empty({4, 3});
    group.all_to_all_single(input, out, {}, {})->wait();  // ProcessGroup's contract: empty means equal
    exchanged[static_cast<std::size_t>(rank)] = out;
    try {
      group.all_to_all_single(input, out, {1, 1, 2}, {2, 2});
    } catch (const Error& e) {
      errors[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank ", r);
    const auto i = static_cast<std::size_t>(r);
    CHECK(same(exchanged[i], cat({narrow(input_of(0, {4, 3}), 0, 2 * r, 2), narrow(input_of(1, {4, 3}), 0, 2 * r, 2)}, 0)));
    CHECK(errors[i] == "output_splits has 3 entries; the group has 2 ranks");
  }
}

TEST_CASE("bad input: world sizes, group names, group sizes, ranks, splits and dtypes get clear errors" * doctest::test_suite("threads")) {
  CHECK_THROWS_WITH_AS(spawn(0, [](int) {}), "spawn: world_size must be from 1 to 1024, got 0", Error);
  CHECK_THROWS_WITH_AS(all_reduce(ones({2}), "sum", "0"), "[_c10d_functional::all_reduce] Could not resolve the process group registered under the name 0", Error);
  auto only_error = [](const std::function<void()>& fn) {
    std::string message;
    try {
      spawn(1, [&](int) { fn(); });
    } catch (const Error& e) {
      message = e.what();
    }
    return message;
  };
  CHECK(only_error([] { all_reduce(ones({2}), "sum", "7"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_reduce] Could not resolve the process group registered under the name 7");
  CHECK(only_error([] { all_reduce(ones({2}), "mean", "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_reduce] Unrecognized reduce_op: mean (expected sum, avg, product, min or max)");
  CHECK(only_error([] { all_gather_into_tensor(ones({2}), 2, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_gather_into_tensor] group_size 2 does not match the size of group '0', 1");
  CHECK(only_error([] { broadcast(ones({2}), 1, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::broadcast] src 1 is not a rank of group '0' (it has 1 ranks)");
  CHECK(only_error([] { reduce_scatter_tensor(ones({3}), "sum", 2, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::reduce_scatter_tensor] the input's first dimension (3) must be divisible by group_size (2)");
  CHECK(only_error([] { all_to_all_single(ones({3}), {}, {1, 1}, "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_to_all_single] input_split_sizes [1, 1] do not add up to the input's first dimension, 3");
  CHECK(only_error([] { all_reduce(ones({2}, of_dtype(ScalarType::Bool)), "sum", "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_reduce] tensors of dtype bool are not supported (float32, float64 and int64 are)");
  CHECK(only_error([] { all_reduce(ones({2}, of_dtype(ScalarType::Int64)), "avg", "0"); }) ==
        "spawn: rank 0 failed: [_c10d_functional::all_reduce] reduce_op avg needs a floating point tensor, got int64");
}

namespace {

// The MLP experiment's model trained `steps` SGD steps: in one process on the whole batch, or data-parallel on
// `world` thread ranks, each on its slice of the batch. Returns the parameters after (rank 0's; every
// rank's must be equal).
std::vector<Tensor> train_seed(int world, int steps, std::int64_t bucket_cap_bytes = std::int64_t{25} << 20,
                               std::size_t* buckets = nullptr) {
  const tracer::MlpConfig config{0, {16, 32, 32, 4}, 8, 0.1};
  // Models are made on this thread: the default generator is shared, and rank 0's must be the
  // single-process model; the others start elsewhere and get rank 0's parameters by broadcast.
  std::vector<std::shared_ptr<nn::Sequential>> models;
  for (int r = 0; r < std::max(world, 1); ++r) {
    manual_seed(r == 0 ? config.seed : 1000 + static_cast<std::uint64_t>(r));
    models.push_back(nn::make_mlp(config.sizes));
  }
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);  // captured below: no structured binding
  const Tensor& x = batch.first;
  const Tensor& y = batch.second;
  auto step = [&](nn::Module& model, const Tensor& xs, const Tensor& ys, optim::SGD& opt) {
    opt.zero_grad();
    backward(nn::functional::cross_entropy(model(xs), ys));
    opt.step();
  };
  if (world == 0) {
    optim::SGD opt(models[0]->parameters(), optim::SGDOptions{config.lr});
    for (int s = 0; s < steps; ++s) step(*models[0], x, y, opt);
    return models[0]->parameters();
  }
  std::vector<std::vector<Tensor>> after(static_cast<std::size_t>(world));
  spawn(world, [&](int rank) {
    DataParallelOptions options;
    options.bucket_cap_bytes = options.first_bucket_bytes = bucket_cap_bytes;
    DistributedDataParallel ddp(models[static_cast<std::size_t>(rank)], options);
    if (rank == 0 && buckets) *buckets = ddp.num_buckets();
    optim::SGD opt(ddp.parameters(), optim::SGDOptions{config.lr});
    const std::int64_t share = config.batch / world;
    const Tensor xs = narrow(x, 0, rank * share, share), ys = narrow(y, 0, rank * share, share);
    for (int s = 0; s < steps; ++s) step(ddp, xs, ys, opt);
    after[static_cast<std::size_t>(rank)] = ddp.parameters();
  });
  for (int r = 1; r < world; ++r)
    for (std::size_t i = 0; i < after[0].size(); ++i) CHECK(same(after[static_cast<std::size_t>(r)][i], after[0][i]));
  return after[0];
}

}  // namespace

TEST_CASE("data-parallel training on 2 and 4 ranks ends with the single-process parameters" * doctest::test_suite("threads")) {
  const std::vector<Tensor> reference = train_seed(0, 3);
  for (const int world : {2, 4}) {
    for (const std::int64_t cap : {std::int64_t{25} << 20, std::int64_t{512}}) {
      INFO("world ", world, " bucket cap ", cap);
      std::size_t buckets = 0;
      const std::vector<Tensor> got = train_seed(world, 3, cap, &buckets);
      CHECK(buckets == (cap == 512 ? 6u : 1u));  // 512 B: no two of the six parameters fit one bucket
      REQUIRE(got.size() == reference.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(tracer::allclose(got[i], reference[i], 1e-6, 1e-6));
    }
  }
}

namespace {

// Note [A gradcheck across ranks]: each rank's loss L_r depends on every rank's input through the
// collectives, and autograd gives rank r the gradient of the total, sum_k L_k, with respect to its own
// input. The numerical check perturbs one element of one rank's input at a time (every rank runs the
// same loop, so the collectives stay in step), sums the ranks' losses with an all_reduce, and takes
// central differences of that total.
void check_gradients_across_ranks(int world, const std::vector<std::int64_t>& sizes,
                                  const std::function<Tensor(int rank, const Tensor& x)>& loss) {
  std::vector<std::vector<double>> analytic(static_cast<std::size_t>(world)), numeric(static_cast<std::size_t>(world));
  spawn(world, [&](int rank) {
    const Tensor x = requires_grad_(to(input_of(rank, sizes), ScalarType::Float64));
    backward(loss(rank, x));
    analytic[static_cast<std::size_t>(rank)] = x.grad().to_vector<double>();
    const autograd::NoGradGuard no_grad;
    const double eps = 1e-6;
    auto total = [&](const Tensor& at) { return wait_tensor(all_reduce(loss(rank, at), "sum", "0")).item<double>(); };
    for (int p = 0; p < world; ++p)
      for (std::int64_t i = 0; i < numel_of(sizes); ++i) {
        auto shifted = [&](double by) {
          Tensor v = clone(x);
          if (rank == p) v.view({-1}).data_ptr<double>()[i] += by;
          return v;
        };
        const double d = (total(shifted(eps)) - total(shifted(-eps))) / (2 * eps);
        if (rank == p) numeric[static_cast<std::size_t>(rank)].push_back(d);
      }
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank ", r);
    REQUIRE(analytic[static_cast<std::size_t>(r)].size() == numeric[static_cast<std::size_t>(r)].size());
    for (std::size_t i = 0; i < numeric[static_cast<std::size_t>(r)].size(); ++i)
      CHECK(analytic[static_cast<std::size_t>(r)][i] == doctest::Approx(numeric[static_cast<std::size_t>(r)][i]).epsilon(1e-6));
  }
}

// A loss that weighs each output element differently on each rank.
Tensor weighted_sum(int rank, const Tensor& y) {
  return sum(mul(y, to(input_of(rank + 7, testing::sizes_of(y)), ScalarType::Float64)));
}

}  // namespace

TEST_CASE("the differentiable collectives pass a gradcheck across ranks" * doctest::test_suite("threads")) {
  for (const int world : {2, 3}) {
    INFO("world ", world);
    check_gradients_across_ranks(world, {2, 3}, [&](int rank, const Tensor& x) {
      return weighted_sum(rank, wait_tensor(all_gather_tensor_autograd(x, world, "0")));
    });
    check_gradients_across_ranks(world, {3 * world, 2}, [&](int rank, const Tensor& x) {
      return weighted_sum(rank, wait_tensor(reduce_scatter_tensor_autograd(x, "sum", world, "0")));
    });
    // uneven exchange: rank r sends j + 1 rows to rank j
    check_gradients_across_ranks(world, {world * (world + 1) / 2, 2}, [&](int rank, const Tensor& x) {
      std::vector<std::int64_t> in_splits, out_splits(static_cast<std::size_t>(world), rank + 1);
      for (int j = 0; j < world; ++j) in_splits.push_back(j + 1);
      return weighted_sum(rank, wait_tensor(all_to_all_single_autograd(x, out_splits, in_splits, "0")));
    });
  }
}

TEST_CASE("the differentiable collectives record a node each; wait_tensor keeps the history" * doctest::test_suite("threads")) {
  std::vector<std::string> names(2);
  spawn(2, [&](int rank) {
    const Tensor x = requires_grad_(ones({2}));
    const Tensor y = wait_tensor(all_gather_tensor_autograd(x, 2, "0"));
    CHECK(y.requires_grad());
    names[static_cast<std::size_t>(rank)] = std::string(y.grad_fn()->name());
    CHECK_THROWS_WITH_AS(reduce_scatter_tensor_autograd(ones({2}), "max", 2, "0"),
                         "reduce_scatter_tensor_autograd: only reduce_op sum is differentiable, got max", Error);
    backward(sum(y));
    CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 2});  // both ranks' ones, reduce-scattered
  });
  CHECK(names[0] == "AllGatherIntoTensorBackward");
}

TEST_CASE("split_group makes a 2-D mesh's rows and columns; collectives stay within a group" * doctest::test_suite("threads")) {
  std::vector<std::string> row_names(4), col_names(4);
  std::vector<Tensor> row_sums(4), col_sums(4);
  spawn(4, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    row_names[r] = split_group({{0, 1}, {2, 3}});
    col_names[r] = split_group({{0, 2}, {1, 3}});
    const Tensor mine = full({2}, static_cast<double>(rank + 1));
    row_sums[r] = wait_tensor(all_reduce(mine, "sum", row_names[r]));
    col_sums[r] = wait_tensor(all_reduce(mine, "sum", col_names[r]));
    CHECK(resolve_process_group(row_names[r]).size() == 2);
    CHECK(resolve_process_group(col_names[r]).rank() == rank / 2);
  });
  CHECK(row_names == std::vector<std::string>{"1", "1", "2", "2"});
  CHECK(col_names == std::vector<std::string>{"3", "4", "3", "4"});
  // rows {0, 1}: 1 + 2, {2, 3}: 3 + 4; columns {0, 2}: 1 + 3, {1, 3}: 2 + 4
  const std::vector<double> rows{3, 3, 7, 7}, cols{4, 6, 4, 6};
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(row_sums[r].to_vector<double>() == std::vector<double>{rows[r], rows[r]});
    CHECK(col_sums[r].to_vector<double>() == std::vector<double>{cols[r], cols[r]});
  }
  // A rank in no list gets no group; bad partitions are refused.
  std::vector<std::string> partial(3);
  spawn(3, [&](int rank) { partial[static_cast<std::size_t>(rank)] = split_group({{0, 2}}); });
  CHECK(partial == std::vector<std::string>{"1", "", "1"});
  auto error_of = [](const std::vector<std::vector<int>>& split) {
    std::string message;
    try {
      spawn(1, [&](int) { split_group(split); });
    } catch (const Error& e) {
      message = e.what();
    }
    return message;
  };
  CHECK(error_of({{0}, {0}}) == "spawn: rank 0 failed: split_group: rank 0 is in more than one list of split_ranks");
  CHECK(error_of({{1}}) == "spawn: rank 0 failed: split_group: rank 1 is not a rank of group '0' (it has 1 ranks)");
  CHECK(error_of({{}}) == "spawn: rank 0 failed: split_group: a list of split_ranks is empty");
}

TEST_CASE("a rank that fails releases the ranks waiting in a group split from the world" * doctest::test_suite("threads")) {
  std::string seen;
  std::mutex m;
  CHECK_THROWS_WITH_AS(spawn(4,
                             [&](int rank) {
                               const std::string row = split_group({{0, 1}, {2, 3}});
                               if (rank == 1) throw Error("boom");
                               if (rank != 0) return;
                               try {
                                 wait_tensor(all_reduce(ones({1}), "sum", row));
                               } catch (const Error& e) {
                                 const std::lock_guard<std::mutex> lock(m);
                                 seen = e.what();
                               }
                             },
                             SpawnOptions{std::chrono::minutes(5)}),
                       "spawn: rank 1 failed: boom", Error);
  CHECK(seen == "[_c10d_functional::wait_tensor] all_reduce (collective #0 on group '1') cannot complete: rank 1 failed: boom");
}

TEST_CASE("all_reduce_ reduces in place; a non-contiguous tensor is refused" * doctest::test_suite("threads")) {
  for (const int world : {2, 3}) {
    std::vector<Tensor> got(static_cast<std::size_t>(world));
    spawn(world, [&](int rank) {
      const Tensor x = input_of(rank, {5, 3});
      const Tensor& same_x = all_reduce_(x, "sum", "0");
      CHECK(same_x.impl() == x.impl());
      got[static_cast<std::size_t>(rank)] = wait_tensor(x);
    });
    for (const Tensor& g : got) CHECK(g.to_vector<double>() == testing::reduced("sum", world, 15));
  }
  std::string message;
  try {
    spawn(1, [](int) { all_reduce_(t(ones({2, 3})), "sum", "0"); });
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message == "spawn: rank 0 failed: [_c10d_functional::all_reduce_] the tensor must be contiguous to be reduced in place");
}

// The golden is PyTorch's DDP on gloo (scripts/reference/data_parallel_reference.py): the reducer's
// mul.out per gradient, allreduce_ on the bucket, as_strided views and copy_ into each .grad.
TEST_CASE("every rank of a data-parallel step runs the golden op sequence, collectives included" * doctest::test_suite("threads")) {
  const nlohmann::json golden = testing::read_golden_json("data_parallel_seed_w2_seq.json");
  const tracer::MlpConfig config{0, {16, 32, 4}, 8, 0.1};
  std::vector<std::shared_ptr<nn::Sequential>> models;
  for (int r = 0; r < 2; ++r) {
    manual_seed(static_cast<std::uint64_t>(r));
    models.push_back(nn::make_mlp(config.sizes));
  }
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);
  std::vector<tracer::OpCounter> counters(2);
  spawn(2, [&](int rank) {
    DistributedDataParallel ddp(models[static_cast<std::size_t>(rank)]);
    optim::SGD opt(ddp.parameters(), optim::SGDOptions{config.lr});
    const Tensor x = narrow(batch.first, 0, rank * 4, 4), y = narrow(batch.second, 0, rank * 4, 4);
    tracer::OpCounter& counter = counters[static_cast<std::size_t>(rank)];
    const ModeGuard mode(counter);
    const Tensor loss = nn::functional::cross_entropy(ddp(x), y);
    counter.set_phase("backward");
    backward(loss);
    counter.set_phase("optimizer");
    opt.step();
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank ", r);
    for (const char* phase : {"forward", "backward", "optimizer"})
      CHECK(nlohmann::json(counters[static_cast<std::size_t>(r)].sequence(phase)) == golden[std::string(phase) + "_seq"]);
    // The averaged gradients, PyTorch's on both ranks.
    const std::vector<Tensor> params = models[static_cast<std::size_t>(r)]->parameters();
    REQUIRE(params.size() == golden["grads"].size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::vector<float> want = golden["grads"][i];
      CHECK(tracer::allclose(params[i].grad(), tensor(want, params[i].sizes()), 1e-5, 1e-6));
    }
  }
}

}  // namespace test_thread_collectives
