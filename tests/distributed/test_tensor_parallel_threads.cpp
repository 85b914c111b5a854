// tests/distributed/test_tensor_parallel_threads.cpp: parallelize_module on the MLP of strata-trace's
// experiment, on thread ranks: the colwise/rowwise step's loss, gradients (full_tensor of each DTensor
// gradient) and updated parameters equal the single-process step's (rtol 1e-5) on 2 and 4 ranks and
// for a deeper MLP; a DTensor handed between the layers; SGD with every option on DTensor parameters;
// 2-D data parallel x tensor parallel on a (2, 2) mesh gives the whole batch's step.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "distributed/dtensor.h"
#include "distributed/tensor_parallel.h"
#include "distributed/thread_backend.h"
#include "autograd/backward.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tracer/cli/mlp_experiment.h"
#include "tests/distributed/rank_failures.h"
#include "tests/distributed/tensor_parallel_step.h"

namespace test_tensor_parallel_threads {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {

using Failures = testing::RankFailures;

// The single-process model, one copy per rank, made on this thread (the default generator is shared).
std::vector<std::shared_ptr<nn::Sequential>> models(const tracer::MlpConfig& config, int world) {
  std::vector<std::shared_ptr<nn::Sequential>> out;
  for (int r = 0; r < world; ++r) {
    manual_seed(config.seed);
    out.push_back(nn::make_mlp(config.sizes));
  }
  return out;
}

// fn(rank, model, ref, batch, failures) on `world` thread ranks, each with its copy of the model, the
// single-process step `ref` and the whole batch.
using RankCase = std::function<void(int rank, nn::Sequential& model, const tracer::PlainStep& ref,
                                    const std::pair<Tensor, Tensor>& batch, Failures& failures)>;
void on_ranks(const tracer::MlpConfig& config, int world, const RankCase& fn) {
  const tracer::PlainStep ref = tracer::plain_step(config);
  const auto ms = models(config, world);
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);
  Failures failures;
  spawn(world, [&](int rank) { fn(rank, *ms[static_cast<std::size_t>(rank)], ref, batch, failures); });
  failures.report();
}

void tensor_parallel_case(const tracer::MlpConfig& config, int world) {
  on_ranks(config, world, [&](int rank, nn::Sequential& model, const tracer::PlainStep& ref,
                              const std::pair<Tensor, Tensor>& batch, Failures& failures) {
    testing::check_tensor_parallel_step(model, init_device_mesh({world}), ref, batch.first, batch.second, config.lr,
                                        failures, rank);
  });
}

}  // namespace

TEST_CASE("colwise then rowwise on the experiment's MLP: the single-process step on 2 and 4 ranks" *
          doctest::test_suite("threads")) {
  const tracer::MlpConfig config;  // sizes 16, 32, 4; batch 8; seed 0
  for (int world : {2, 4}) {
    CAPTURE(world);
    tensor_parallel_case(config, world);
  }
}

TEST_CASE("a deeper MLP alternates the styles, its last colwise layer gathering the output" *
          doctest::test_suite("threads")) {
  tracer::MlpConfig config;
  config.sizes = {16, 32, 32, 8};
  tensor_parallel_case(config, 4);
}

TEST_CASE("a DTensor between the layers (use_local_output=false): the rowwise layer takes it as it is" *
          doctest::test_suite("threads")) {
  on_ranks(tracer::MlpConfig{}, 2, [&](int rank, nn::Sequential& model, const tracer::PlainStep& ref,
                                        const std::pair<Tensor, Tensor>& batch, Failures& failures) {
    parallelize_module(model, init_device_mesh({2}),
                       {{"0", ColwiseParallel{.use_local_output = false}}, {"2", RowwiseParallel{}}});
    const Tensor loss = nn::functional::cross_entropy(model(batch.first), batch.second);
    backward(loss);
    failures.check(tracer::allclose(loss, ref.loss), rank, "loss");
    const Tensor g = full_tensor(model.parameters()[0].grad());
    failures.check(tracer::allclose(g, ref.grads[0]), rank, "grad 0");
  });
}

TEST_CASE("SGD with momentum, nesterov, weight decay and maximize updates DTensor parameters as plain ones" *
          doctest::test_suite("threads")) {
  const tracer::MlpConfig config;
  const optim::SGDOptions options{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true, .maximize = true};
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);
  auto ms = models(config, 3);  // two ranks' copies and the reference
  auto train = [&](nn::Module& model) {
    optim::SGD opt(model.parameters(), options);
    for (int s = 0; s < 2; ++s) {  // the second step reads the momentum buffers
      opt.zero_grad();
      backward(nn::functional::cross_entropy(model(batch.first), batch.second));
      opt.step();
    }
  };
  train(*ms[2]);
  const std::vector<Tensor> want = ms[2]->parameters();
  Failures failures;
  spawn(2, [&](int rank) {
    nn::Sequential& model = *ms[static_cast<std::size_t>(rank)];
    parallelize_module(model, init_device_mesh({2}), alternating_linear_plan(model));
    train(model);
    const std::vector<Tensor> got = model.parameters();
    for (std::size_t i = 0; i < got.size(); ++i)
      failures.check(tracer::allclose(full_tensor(got[i]), want[i]), rank, "param " + std::to_string(i));
  });
  failures.report();
}

TEST_CASE("2-D: data parallel over dimension 0 and tensor parallel over 1 on a (2, 2) mesh: the whole batch's step" *
          doctest::test_suite("threads")) {
  const tracer::MlpConfig config;
  on_ranks(config, 4, [&](int rank, nn::Sequential& model, const tracer::PlainStep& ref,
                          const std::pair<Tensor, Tensor>& batch, Failures& failures) {
    const DeviceMesh mesh = init_device_mesh({2, 2}, {"dp", "tp"});
    const std::int64_t share = config.batch / 2, at = (*mesh.get_coordinate())[0] * share;
    testing::check_tensor_parallel_step(model, mesh.slice("tp"), ref, narrow(batch.first, 0, at, share),
                                        narrow(batch.second, 0, at, share), config.lr, failures, rank, &mesh, 0);
  });
}

}  // namespace test_tensor_parallel_threads
