// tests/distributed/tensor_parallel_step.h: one tensor-parallel SGD step of the experiment's MLP and
// its comparison with the single-process step, shared by the thread-rank and MPI tests.
#pragma once

#include <string>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "distributed/dtensor.h"
#include "distributed/tensor_parallel.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "optim/sgd.h"
#include "tests/distributed/rank_failures.h"
#include "tracer/cli/mlp_experiment.h"

namespace strata::testing {

// One tensor-parallel SGD step on `tp` of `model` over the batch slice (x, y); with a data-parallel
// dimension `dp` of `mesh`, the gradients are averaged over it before the step. Checks the loss (when
// the slice is the whole batch), every gradient and updated parameter against `ref`.
inline void check_tensor_parallel_step(nn::Sequential& model, const distributed::DeviceMesh& tp,
                                       const tracer::PlainStep& ref, const Tensor& x, const Tensor& y, double lr,
                                       RankFailures& failures, int rank, const distributed::DeviceMesh* mesh = nullptr,
                                       int dp = 0) {
  distributed::parallelize_module(model, tp, distributed::alternating_linear_plan(model));
  for (const Tensor& p : model.parameters())
    failures.check(distributed::is_dtensor(p) && p.requires_grad(), rank, "a parameter");
  optim::SGD opt(model.parameters(), {.lr = lr});
  const Tensor logits = model(x);
  failures.check(!distributed::is_dtensor(logits), rank, "the output is local");
  const Tensor loss = nn::functional::cross_entropy(logits, y);
  backward(loss);
  if (mesh) distributed::average_gradients(model, *mesh, dp);
  if (!mesh) failures.check(tracer::allclose(loss, ref.loss), rank, "loss");
  opt.step();
  const NoGradGuard no_grad;
  const std::vector<Tensor> params = model.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    failures.check(distributed::is_dtensor(params[i].grad()), rank, "a DTensor gradient");
    const std::string at = std::to_string(i);
    failures.check(tracer::allclose(distributed::full_tensor(params[i].grad()), ref.grads[i]), rank, "grad " + at);
    failures.check(tracer::allclose(distributed::full_tensor(params[i]), ref.params_after[i]), rank, "param " + at);
  }
}

}  // namespace strata::testing
