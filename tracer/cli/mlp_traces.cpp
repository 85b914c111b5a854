// tracer/cli/mlp_traces.cpp: the MLP step's traces (tracer/cli/mlp_traces.h).
#include "tracer/cli/mlp_traces.h"

#include <memory>

#include "autograd/variable.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "modes/logging_tensor.h"
#include "modes/scaled_tensor.h"

namespace strata::tracer {

std::vector<Tensor> mlp_loss_program(std::span<const Tensor> inputs) {
  STRATA_CHECK(inputs.size() >= 4 && inputs.size() % 2 == 0, "mlp_loss_program: expected x, target and a weight "
               "and bias per layer, got ", inputs.size(), " inputs");
  Tensor h = inputs[0];
  const std::size_t layers = (inputs.size() - 2) / 2;
  for (std::size_t i = 0; i < layers; ++i) {
    h = nn::functional::linear(h, inputs[2 + 2 * i], inputs[3 + 2 * i]);
    if (i + 1 < layers) h = nn::functional::relu(h);
  }
  return {nn::functional::cross_entropy(h, inputs[1])};
}

RecordedProgram record_mlp_traces(const MlpConfig& config, MlpTraceKind kind) {
  manual_seed(config.seed);
  const std::shared_ptr<nn::Sequential> model = nn::make_mlp(config.sizes);
  const auto [x, y] = make_batch(config);
  std::vector<TraceInput> inputs{{"x", x}, {"target", y}};
  for (TraceInput& p : parameter_inputs(*model)) inputs.push_back(std::move(p));
  if (kind == MlpTraceKind::Logging) {
    auto log = std::make_shared<LoggingTensor::Log>();
    for (TraceInput& in : inputs) {
      const bool grad = in.value.requires_grad();
      in.value = LoggingTensor::wrap(grad ? clone(detach(in.value)) : in.value, log, grad);
    }
  }
  if (kind == MlpTraceKind::Scaled) {
    for (TraceInput& in : inputs)
      if (in.name.ends_with("_weight"))
        in.value = ScaledTensor::from_float(clone(detach(in.value)), ScalarType::Float8_e4m3fn, /*requires_grad=*/true);
  }
  // What the trace headers say: pinned by tests/golden/program_trace_seed*.txt (output, so unchanged).
  const std::string what = kind == MlpTraceKind::Plain     ? "the seed MLP and its loss"
                           : kind == MlpTraceKind::Logging ? "the seed MLP and its loss, every input a LoggingTensor"
                                                            : "the seed MLP and its loss, every weight a float8 ScaledTensor";
  return record_program(mlp_loss_program, std::move(inputs), what);
}

}  // namespace strata::tracer
