// tracer/cli/debug_step.h: the MLP step under DebugMode (what `strata-trace --debug` prints). The model,
// batch and optimizer are made before the mode is entered, so the log holds exactly the step's ops:
// forward, cross-entropy, backward, SGD.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "../../nn/layers.h"
#include "../../modes/debug_hashes.h"
#include "../../modes/fake_tensor.h"
#include "mlp_experiment.h"

namespace strata::tracer {

// `before` (if set) may change the model before the step, e.g. to plant a difference in a parameter.
// With `fake`, everything from the model's construction on runs under that FakeTensorMode (entered
// outside the DebugMode, as `with FakeTensorMode(): with DebugMode(record_faketensor=True):`), so
// the log is the fake step's (record its ops with options.record_faketensor); hashes need real data
// and are refused then.
std::unique_ptr<DebugMode> debug_step(const MlpConfig& config, const DebugModeOptions& options,
                                      std::optional<TensorHash> hashes = std::nullopt,
                                      const std::function<void(nn::Sequential&)>& before = {},
                                      FakeTensorMode* fake = nullptr);

}  // namespace strata::tracer
