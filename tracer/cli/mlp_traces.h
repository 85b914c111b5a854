// tracer/cli/mlp_traces.h: the MLP and its loss recorded as forward and backward traces
// (tracer/trace_recorder.h), on plain parameters or with every input wrapped in a subclass, for
// strata-trace --trace and the golden traces.
#pragma once

#include "mlp_experiment.h"
#include "../trace_recorder.h"

namespace strata::tracer {

enum class MlpTraceKind { Plain, Logging, Scaled };

// The MLP's forward and cross-entropy loss, written functionally over its inputs
// (x, target, p0_weight, p0_bias, ...) as the experiment's subclass step is, and recorded. Logging wraps
// every input in a LoggingTensor; Scaled makes every Linear weight a float8 ScaledTensor (torchao's
// Float8Tensor), so the traces show which matrix products ran as _scaled_mm.
RecordedProgram record_mlp_traces(const MlpConfig& config, MlpTraceKind kind = MlpTraceKind::Plain);

// The MLP loss as a program over (x, target, weights and biases in order): what record_mlp_traces records.
std::vector<Tensor> mlp_loss_program(std::span<const Tensor> inputs);

}  // namespace strata::tracer
