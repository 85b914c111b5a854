// tracer/cli/rank_views.h: strata-trace's --debug and --trace on several ranks (--world-size N
// [--rank R]): the data-parallel step runs on every rank (thread ranks, or one per process under
// mpirun), and one rank's DebugMode log or program trace is kept, its collectives included.
#pragma once

#include <memory>
#include <optional>

#include "../../modes/debug_hashes.h"
#include "../../modes/debug_mode.h"
#include "../program_trace.h"
#include "mlp_experiment.h"

namespace strata::tracer {

// Note [One rank's view of the data-parallel step]
// Every rank runs run_data_parallel's step (forward through DistributedDataParallel, cross-entropy,
// backward, whose gradient hooks reduce the buckets with c10d::allreduce_ and wait for them in the
// final callback, then SGD); rank `rank` alone runs it under the view's mode, entered after its
// model, DDP (with its parameter broadcast) and optimizer are made, as debug_step enters its mode.
// So the log holds the single-process step's ops on the rank's share of the batch, plus DDP's own:
// each gradient divided into its bucket (mul.out), the buckets' all-reduces and waits, and the
// reduced gradients copied back (as_strided, copy_). The other ranks run the step unwatched.

// The step's DebugMode on rank `rank`; null in a process that does not run that rank (under MPI,
// every process but one).
std::unique_ptr<DebugMode> debug_data_parallel_step(const MlpConfig& config, const DebugModeOptions& options,
                                                    std::optional<TensorHash> hashes, int rank);

// The step recorded on rank `rank` as one trace (TraceRecording: the forward's calls, the backward's
// node groups with DDP's collectives in them, SGD's ops); none in a process that does not run it.
std::optional<Trace> trace_data_parallel_step(const MlpConfig& config, int rank);

}  // namespace strata::tracer
