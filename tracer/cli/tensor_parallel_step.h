// tracer/cli/tensor_parallel_step.h: strata-trace --world-size N --tp T [--mesh D,T]: the MLP step
// tensor-parallel on a (N/T, T) mesh (data parallel x tensor parallel), on thread ranks or one rank
// per process under mpirun, or one fake rank of it with --fake.
#pragma once

#include <functional>

#include "mlp_experiment.h"

namespace strata::tracer {

// Note [The tensor-parallel step]
// Every rank builds the (N/T, T) mesh (dimensions "dp" and "tp"), the same model (manual_seed(seed),
// as the single-process step), and parallelizes its Linear layers on its "tp" row with
// distributed::alternating_linear_plan (Colwise, Rowwise, Colwise, ...: Megatron's pairs, the
// activations between a pair sharded, the model's input and output whole). Its "dp" coordinate d
// takes rows [d * batch / D, (d + 1) * batch / D) of the batch; after the backward the gradients are
// averaged over "dp" (distributed::average_gradients; nothing to average when D is 1), so each rank's
// SGD step is the one of the whole batch, which traced_step_matches checks against the
// single-process step: every dp row's logits gathered in order, and rank 0's parameters made whole
// (full_tensor) after the step. The counter is rank 0's, around its forward, backward (with the
// average) and SGD step, so it sees the DTensor ops and the collectives of the redistributions.

// One line for what the tensor-parallel step cannot run: T not dividing N, the data-parallel size
// N/T not dividing the batch, or T not dividing a width the plan shards (each Colwise layer's output
// features: the hidden sizes, and the output size when the number of layers is odd).
void check_tensor_parallel(const MlpConfig& config);

// The step on config.world_size ranks (run_spmd: threads, or this process's rank under MPI): rank
// 0's counter, the whole batch's logits, rank 0's loss, and its parameters after the step, whole.
TracedStep tensor_parallel_step(const MlpConfig& config);

// The step on config.world_size thread ranks, rank r's under phases_of(r) (called on its thread):
// the explorer's page of every rank (html_step.h).
void run_tensor_parallel(const MlpConfig& config, const std::function<PhasedMode(int rank)>& phases_of);

// Rank `rank`'s step alone on the fake process group under FakeTensorMode (Note [One fake rank of a
// large world]): its counter and its fake (shapes only) logits, loss and parameters.
TracedStep fake_tensor_parallel_step(const MlpConfig& config, int rank);

}  // namespace strata::tracer
