// tests/distributed/test_tensor_parallel_threads.cpp: parallelize_module on the MLP of strata-trace's
// experiment, on thread ranks: the colwise/rowwise step's loss, gradients (full_tensor of each DTensor
// gradient) and updated parameters equal the single-process step's (rtol 1e-5) on 2 and 4 ranks and
// for a deeper MLP; 2-D data parallel x tensor parallel on a (2, 2) mesh gives the whole batch's step.
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "distributed/dtensor.h"
#include "distributed/tensor_parallel.h"
#include "distributed/thread_backend.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tracer/cli/mlp_experiment.h"
#include "tests/distributed/rank_failures.h"

namespace test_tensor_parallel_threads {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {

using Failures = strata::testing::RankFailures;

// The single-process model, one copy per rank, made on this thread (the default generator is shared).
std::vector<std::shared_ptr<nn::Sequential>> models(const tracer::MlpConfig& config, int world) {
  std::vector<std::shared_ptr<nn::Sequential>> out;
  for (int r = 0; r < world; ++r) {
    manual_seed(config.seed);
    out.push_back(nn::make_mlp(config.sizes));
  }
  return out;
}

// One tensor-parallel SGD step on `tp` of `model` over the batch slice (x, y); with a data-parallel
// dimension `dp` of `mesh`, the gradients are averaged over it before the step. Checks the loss (when
// the slice is the whole batch), every gradient and updated parameter against `ref`.
void check_step(nn::Sequential& model, const DeviceMesh& tp, const tracer::PlainStep& ref, const Tensor& x,
                const Tensor& y, double lr, Failures& failures, int rank, const DeviceMesh* mesh = nullptr,
                int dp = 0) {
  parallelize_module(model, tp, alternating_linear_plan(model));
  for (const Tensor& p : model.parameters()) failures.check(is_dtensor(p) && p.requires_grad(), rank, "a parameter");
  optim::SGD opt(model.parameters(), {.lr = lr});
  const Tensor logits = model(x);
  failures.check(!is_dtensor(logits), rank, "the output is local");
  const Tensor loss = nn::functional::cross_entropy(logits, y);
  backward(loss);
  if (mesh) average_gradients(model, *mesh, dp);
  if (!mesh) failures.check(tracer::allclose(loss, ref.loss), rank, "loss");
  opt.step();
  const NoGradGuard no_grad;
  const std::vector<Tensor> params = model.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    failures.check(is_dtensor(params[i].grad()), rank, "a DTensor gradient");
    failures.check(tracer::allclose(full_tensor(params[i].grad()), ref.grads[i]), rank, "grad " + std::to_string(i));
    failures.check(tracer::allclose(full_tensor(params[i]), ref.params_after[i]), rank, "param " + std::to_string(i));
  }
}

void tensor_parallel_case(const tracer::MlpConfig& config, int world) {
  const tracer::PlainStep ref = tracer::plain_step(config);
  const auto ms = models(config, world);
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);
  Failures failures;
  spawn(world, [&](int rank) {
    const DeviceMesh tp = init_device_mesh({world});
    check_step(*ms[static_cast<std::size_t>(rank)], tp, ref, batch.first, batch.second, config.lr, failures, rank);
  });
  failures.report();
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

TEST_CASE("2-D: data parallel over dimension 0 and tensor parallel over 1 on a (2, 2) mesh: the whole batch's step" *
          doctest::test_suite("threads")) {
  const tracer::MlpConfig config;
  const tracer::PlainStep ref = tracer::plain_step(config);
  const auto ms = models(config, 4);
  const std::pair<Tensor, Tensor> batch = tracer::make_batch(config);
  Failures failures;
  spawn(4, [&](int rank) {
    const DeviceMesh mesh = init_device_mesh({2, 2}, {"dp", "tp"});
    const std::int64_t share = config.batch / 2, at = (*mesh.get_coordinate())[0] * share;
    check_step(*ms[static_cast<std::size_t>(rank)], mesh.slice("tp"), ref, narrow(batch.first, 0, at, share),
               narrow(batch.second, 0, at, share), config.lr, failures, rank, &mesh, 0);
  });
  failures.report();
}

}  // namespace test_tensor_parallel_threads
