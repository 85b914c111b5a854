// lm/inspect.h: what `strata-lm --debug-step` and `--flops` show: the prompt's prefill, then the
// first decode step (the forward of the first token sampled after the prompt), run under DebugMode
// and FlopCounterMode with the model's module scopes (lm/module_scope.h) handed to them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <strata/modes/debug_mode.h>

#include "model.h"
#include "sampler.h"

namespace lm {

// FLOPs of one forward by module (FlopCounterMode's count: matrix products, 2*m*k*n each; a module's
// count holds its children's), modules in the order they were first entered, "Transformer" first.
struct ModuleFlops {
  std::string module;  // "Transformer.layers.0.attention"
  std::int64_t flops = 0;
};
struct ForwardFlops {
  std::int64_t tokens = 0;    // the tokens the forward ran
  std::int64_t position = 0;  // the first one's position
  std::int64_t total = 0;     // every FLOP counted (FlopCounterMode's Global)
  std::vector<ModuleFlops> modules;
};

// Runs `forward` under a FlopCounterMode (and the module scopes it enters) and returns the counts.
ForwardFlops count_forward_flops(const std::function<void()>& forward, std::int64_t tokens, std::int64_t position);

struct InspectRequest {
  bool debug_log = false;  // the decode step's DebugMode log
  bool flops = false;      // the prefill's and the decode step's FLOPs
};

struct StepInspection {
  std::int64_t prompt_tokens = 0;  // the prefill's tokens (BOS included); the decode step's position
  int decode_token = 0;            // the token the decode step feeds: sampled from the prefill's logits
  std::vector<strata::tracer::DebugCall> debug_calls;  // the decode step's log (debug_log)
  std::string debug_log;                               // as DebugMode::debug_string() prints it
  ForwardFlops prefill, decode;                        // (flops)
};

// The prefill of `prompt` (at least one token, fewer than seq_len), a token sampled from its logits,
// then that token's forward at position prompt.size(): the first decode step, which alone runs under
// DebugMode (record_torchfunction and record_nn_module on). Nothing else is generated.
StepInspection inspect_first_decode_step(Model& model, Sampler& sampler, std::span<const int> prompt,
                                         const InspectRequest& request);

// The table --flops prints: a row per module, indented by depth and named relative to its parent,
// the decode step's FLOPs per token, and, when `prefill` is given, the prefill's per token (rounded).
std::string flops_table(const ForwardFlops& decode, const ForwardFlops* prefill = nullptr);

}  // namespace lm
