// tracer/cli/explain.h: strata-trace --explain: the MLP step's dispatch trace with the two layers above
// the dispatcher, module calls and function calls, each holding the lines of what ran inside it.
#pragma once

#include <string>

#include "mlp_experiment.h"

namespace strata::tracer {

// The trace of one plain step's forward, backward and optimizer phases (each under a "# phase" line):
// "[module] Sequential.0" for a module's forward, "torch.nn.functional.linear(f32[8, 16], ...)" for a
// call a function mode sees, and below them the dispatch steps of the ops they ran.
std::string explain_step(const MlpConfig& config);

}  // namespace strata::tracer
