// lm/cli_inside.h: the runs of strata-lm's "seeing inside" flags that replace the generation:
// --fake --config (no MODEL) and the first decode step's inspection (--debug-step, --flops).
#pragma once

#include <ostream>
#include <span>

#include "cli_args.h"
#include "model.h"
#include "sampler.h"

namespace lm {

// --fake --config CONFIG.json: the report of lm/fake_model.h for a decode step attending to -n
// positions (0, or more than the config's max_position_embeddings: all of them).
int run_fake(const CliOptions& o, std::ostream& out);

// --debug-step and/or --flops: the prefill of `prompt`, then the first decode step; prints its
// DebugMode log (a header line, then one line per call) and/or the FLOPs table.
int run_inspection(const CliOptions& o, Model& model, Sampler& sampler, std::span<const int> prompt, std::ostream& out);

}  // namespace lm
