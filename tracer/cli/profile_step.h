// tracer/cli/profile_step.h: the MLP step under the profiler (strata-trace --profile) and the autograd
// graph of its loss (strata-trace --graph).
#pragma once

#include <string>
#include <vector>

#include "../../modes/profiler.h"
#include "mlp_experiment.h"

namespace strata::tracer {

// run_step with a Profiler recording from the forward to the end of the optimizer step (the ops an
// OpCounter counts), each phase inside a record_function scope named "forward", "backward" or
// "optimizer"; the events, with self times. `warmup` unprofiled steps run first (torch.profiler's
// schedule warmup), so one-time costs (an op's first lookup, autograd's registration, first
// allocations) do not land in the profile.
std::vector<profiler::Event> profile_step(const MlpConfig& config, const profiler::ProfilerOptions& options = {},
                                          int warmup = 1);

// The MLP's loss on its batch, before any step, as DOT (to_dot, the parameters named as
// named_parameters() names them: "0.weight").
std::string mlp_graph_dot(const MlpConfig& config);

}  // namespace strata::tracer
