// tracer/cli/profile_step.cpp: the profiled MLP step and its graph.
#include "tracer/cli/profile_step.h"

#include <optional>

#include "core/generator.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "tracer/autograd_dot.h"

namespace strata::tracer {

std::vector<profiler::Event> profile_step(const MlpConfig& config, const profiler::ProfilerOptions& options,
                                          int warmup) {
  for (int i = 0; i < warmup; ++i) (void)plain_step(config);
  std::optional<profiler::Profiler> profiler;
  std::optional<profiler::record_function> scope;
  std::vector<profiler::Event> events;
  PhasedMode phases;
  phases.set_phase = [&](const std::string& phase) {
    if (!profiler) profiler.emplace(options);
    scope.reset();  // closes the previous phase's scope
    scope.emplace(phase);
  };
  phases.on_end = [&] {
    scope.reset();
    events = profiler->events();
    profiler.reset();
  };
  run_step(config, phases);
  return events;
}

std::string mlp_graph_dot(const MlpConfig& config) {
  manual_seed(config.seed);  // the MLP experiment's model and batch
  const auto model = nn::make_mlp(config.sizes);
  const auto [x, y] = make_batch(config);
  const Tensor loss = nn::functional::cross_entropy((*model)(x), y);
  return to_dot(loss, model->named_parameters());
}

}  // namespace strata::tracer
