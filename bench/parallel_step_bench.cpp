// bench/parallel_step_bench.cpp: the MLP step on 2 thread ranks, data-parallel and tensor-parallel.
// The ranks step in lockstep (their collectives meet), so each runs a fixed number of steps; rank 0's
// median is the figure. The data-parallel step communicates once (the gradient bucket's all-reduce);
// the tensor-parallel one all-reduces the rowwise layer's output in the forward and the colwise
// layer's input gradient in the backward, and runs every op through the DTensor handler.
#include "bench/parallel_step_bench.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "autograd/backward.h"
#include "bench/timing.h"
#include "distributed/data_parallel.h"
#include "distributed/tensor_parallel.h"
#include "distributed/thread_backend.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "tracer/cli/mlp_experiment.h"

namespace strata::bench {

namespace {

constexpr int kTimedSteps = 400;

// fn(rank, model, x, y) wraps the rank's copy of the seed's model and runs one step on it.
using RankStep = std::function<std::function<void()>(int rank, std::shared_ptr<nn::Sequential> model)>;

double rank0_median_us(const RankStep& make) {
  std::vector<std::shared_ptr<nn::Sequential>> models;
  for (int r = 0; r < 2; ++r) {  // made here: the default generator is shared by the ranks' threads
    manual_seed(0);
    models.push_back(nn::make_mlp({16, 32, 4}));
  }
  double median_us = 0;
  distributed::spawn(2, [&](int rank) {
    const std::function<void()> step = make(rank, models[static_cast<std::size_t>(rank)]);
    std::vector<double> samples;
    for (int i = 0; i < kTimedSteps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      step();
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    if (rank != 0) return;
    std::nth_element(samples.begin(), samples.begin() + kTimedSteps / 2, samples.end());
    median_us = samples[kTimedSteps / 2];
  });
  return median_us;
}

// zero_grad, forward, cross_entropy, backward, SGD step, on `model` (owned by the closure).
std::function<void()> sgd_step(std::shared_ptr<nn::Module> model, const Tensor& x, const Tensor& y) {
  auto opt = std::make_shared<optim::SGD>(model->parameters(), optim::SGDOptions{.lr = 0.1});
  return [model, opt, x, y] {
    opt->zero_grad();
    backward(nn::functional::cross_entropy((*model)(x), y));
    opt->step();
  };
}

}  // namespace

void parallel_step_benchmarks(nlohmann::ordered_json& out, double one_process_us) {
  const auto [x, y] = tracer::make_batch(tracer::MlpConfig{});
  const Tensor bx = x, by = y;  // (not the structured bindings: clang before 16 cannot capture them)
  const double ddp_us = rank0_median_us([&](int rank, std::shared_ptr<nn::Sequential> model) {
    auto ddp = std::make_shared<distributed::DistributedDataParallel>(std::move(model));
    return sgd_step(ddp, narrow(bx, 0, rank * 4, 4), narrow(by, 0, rank * 4, 4));
  });
  const double tp_us = rank0_median_us([&](int, std::shared_ptr<nn::Sequential> model) {
    distributed::parallelize_module(*model, distributed::init_device_mesh({2}),
                                    distributed::alternating_linear_plan(*model));
    return sgd_step(std::move(model), bx, by);
  });
  out["seed_step_ddp2_threads_us"] = round3(ddp_us);
  out["seed_step_ddp2_vs_one_process"] = round3(ddp_us / one_process_us);
  out["seed_step_tp2_threads_us"] = round3(tp_us);
  out["seed_step_tp2_vs_one_process"] = round3(tp_us / one_process_us);
  out["seed_step_tp2_vs_ddp2"] = round3(tp_us / ddp_us);
}

}  // namespace strata::bench
