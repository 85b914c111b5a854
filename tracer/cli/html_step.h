// tracer/cli/html_step.h: strata-trace --html FILE: the MLP step recorded by the explorer
// (tracer/explorer.h) and written as its page; with --world-size, every rank's step, one lane each.
#pragma once

#include <string>

#include "mlp_experiment.h"

namespace strata::tracer {

// The page of one step (under a FakeTensorMode with `fake`), or of the data-parallel step on every rank
// when config.world_size > 1 (without the profiler's timeline there: there is one profiler per process).
// Under mpirun (one rank per process) every process runs this: rank 0 gets the page, which holds
// every rank's record, and the other ranks an empty string (Note [The explorer's page under mpirun]).
std::string html_step(const MlpConfig& config, bool fake);

}  // namespace strata::tracer
