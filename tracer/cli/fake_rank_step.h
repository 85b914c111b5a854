// tracer/cli/fake_rank_step.h: strata-trace --fake --world-size N [--rank R]: one rank's step of a
// world far larger than the machine, traced in one process on the fake process group, without data.
#pragma once

#include "mlp_experiment.h"

namespace strata::tracer {

// Note [One fake rank of a large world]
// This process acts as rank `rank` of config.world_size (distributed::FakeWorld registers the fake
// group "0" on this thread) and runs that rank's data-parallel step under an OpCounter and a
// FakeTensorMode entered before the model is made: the model, DDP's buckets, the batch, its slice,
// the gradients and SGD's updates are fakes (meta tensors: sizes, no bytes), and each collective
// returns at once (Note [What the fake group writes]). No thread starts and no other rank exists, so
// the world's size costs nothing; the ops the counter sees are the real rank's (the same model,
// buckets and collectives, on shapes alone). The model is the rank's own, as run_data_parallel makes
// it (seed + 1000 + rank off rank 0), although without data no value tells them apart. The result
// holds the rank's counter and its fake logits, loss, gradients and parameters (shapes only).
TracedStep fake_data_parallel_step(const MlpConfig& config, int rank);

}  // namespace strata::tracer
