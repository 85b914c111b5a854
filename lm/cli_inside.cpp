// lm/cli_inside.cpp: run_fake and run_inspection.
#include "cli_inside.h"

#include "fake_model.h"
#include "hf_checkpoint.h"
#include "inspect.h"

namespace lm {

int run_fake(const CliOptions& o, std::ostream& out) {
  const Config config = read_hf_config(o.config);
  const std::int64_t context = o.steps <= 0 || o.steps > config.seq_len ? config.seq_len : o.steps;
  out << fake_model_text(inspect_fake_model(config, context), o.config);
  out.flush();
  return 0;
}

int run_inspection(const CliOptions& o, Model& model, Sampler& sampler, std::span<const int> prompt, std::ostream& out) {
  const StepInspection step = inspect_first_decode_step(model, sampler, prompt, {o.debug_step, o.flops});
  if (o.debug_step) {
    out << "# DebugMode log of the first decode step: token " << step.decode_token << " at position "
        << step.prompt_tokens << ", after the prompt's " << step.prompt_tokens << " tokens\n"
        << step.debug_log;
    if (!step.debug_log.empty() && step.debug_log.back() != '\n') out << '\n';
  }
  if (o.flops) {
    if (o.debug_step) out << '\n';
    out << flops_table(step.decode, &step.prefill);
  }
  out.flush();
  return 0;
}

}  // namespace lm
