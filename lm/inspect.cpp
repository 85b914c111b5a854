// lm/inspect.cpp: the prefill and first decode step under strata's DebugMode and FlopCounterMode,
// and the per-module FLOPs table.
#include "inspect.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include <strata/core/util/error.h>
#include <strata/modes/flop_counter.h>

#include "scope_tools.h"

namespace lm {

namespace {

using strata::tracer::DebugMode;
using strata::tracer::FlopCounterMode;

// `forward` under `debug` (when given) and a FlopCounterMode (when `count`), the module scopes handed
// to both. The DebugMode is entered outside the counter, so it records every op the counter sees.
ForwardFlops observed_forward(const std::function<void()>& forward, DebugMode* debug, bool count,
                              std::int64_t tokens, std::int64_t position) {
  FlopCounterMode counter;
  std::optional<DebugMode::Guard> debug_guard;
  if (debug) debug_guard.emplace(*debug);
  std::optional<FlopCounterMode::Guard> count_guard;
  if (count) count_guard.emplace(counter);
  ScopeTools tools({debug, count ? &counter : nullptr, false});
  forward();
  tools.check();
  ForwardFlops out;
  out.tokens = tokens;
  out.position = position;
  if (!count) return out;
  out.total = counter.get_total_flops();
  std::map<std::string, std::int64_t> by_module;
  for (const auto& [module, ops] : counter.get_flop_counts())
    for (const auto& [op, flops] : ops) by_module[module] += flops;
  for (const std::string& module : tools.modules()) out.modules.push_back({module, by_module[module]});
  return out;
}

// 1234567 -> "1,234,567".
std::string with_commas(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return value < 0 ? "-" + digits : digits;
}

}  // namespace

ForwardFlops count_forward_flops(const std::function<void()>& forward, std::int64_t tokens, std::int64_t position) {
  return observed_forward(forward, nullptr, true, tokens, position);
}

StepInspection inspect_first_decode_step(Model& model, Sampler& sampler, std::span<const int> prompt,
                                         const InspectRequest& request) {
  const auto n = static_cast<std::int64_t>(prompt.size());
  const std::int64_t seq_len = model.config().seq_len;
  STRATA_CHECK(n >= 1, "lm::inspect_first_decode_step: the prompt has no tokens (expected at least BOS)");
  STRATA_CHECK(n < seq_len, "strata-lm: the prompt's ", n, " tokens leave no position for a decode step (the model's ",
               "seq_len is ", seq_len, ")");
  StepInspection r;
  r.prompt_tokens = n;
  strata::Tensor logits;
  const auto prefill = [&] { logits = model.forward(prompt, 0); };
  if (request.flops) r.prefill = count_forward_flops(prefill, n, 0);
  else prefill();
  r.decode_token = sampler.sample(logits);
  const int token = r.decode_token;
  const auto decode = [&] { model.forward(std::span<const int>(&token, 1), n); };
  strata::tracer::DebugModeOptions options;
  options.record_torchfunction = true;
  options.record_nn_module = true;
  DebugMode mode(options);
  r.decode = observed_forward(decode, request.debug_log ? &mode : nullptr, request.flops, 1, n);
  if (request.debug_log) {
    r.debug_calls = mode.logs();
    r.debug_log = mode.debug_string();
  }
  return r;
}

std::string flops_table(const ForwardFlops& decode, const ForwardFlops* prefill) {
  struct Row {
    std::string name, decode, prefill;
  };
  std::vector<Row> rows{{"Module", "decode FLOPs/token", prefill ? "prefill FLOPs/token" : ""}};
  std::map<std::string, int> depth;  // by module
  std::map<std::string, std::int64_t> prefill_flops;
  if (prefill)
    for (const ModuleFlops& m : prefill->modules) prefill_flops[m.module] = m.flops;
  for (const ModuleFlops& m : decode.modules) {
    // The parent: the longest module named before this one whose name prefixes it.
    std::string parent;
    for (const auto& [name, d] : depth)
      if (m.module.size() > name.size() && m.module.compare(0, name.size() + 1, name + ".") == 0 && name.size() > parent.size())
        parent = name;
    const int d = parent.empty() ? 0 : depth[parent] + 1;
    depth[m.module] = d;
    Row row{std::string(static_cast<std::size_t>(d), ' ') + (parent.empty() ? m.module : m.module.substr(parent.size() + 1)),
            with_commas(m.flops), ""};
    if (prefill) {
      const double per_token = static_cast<double>(prefill_flops[m.module]) / static_cast<double>(prefill->tokens);
      row.prefill = with_commas(static_cast<std::int64_t>(per_token + 0.5));
    }
    rows.push_back(std::move(row));
  }
  std::size_t w0 = 0, w1 = 0, w2 = 0;
  for (const Row& r : rows) w0 = std::max(w0, r.name.size()), w1 = std::max(w1, r.decode.size()), w2 = std::max(w2, r.prefill.size());
  std::string out = "FLOPs per token by module (FlopCounterMode: matrix products, 2*m*k*n each; a module holds its parts')\n";
  out += "decode: the token at position " + std::to_string(decode.position) + ", attending to " +
         std::to_string(decode.position + 1) + " positions\n";
  if (prefill) out += "prefill: the prompt's " + std::to_string(prefill->tokens) + " tokens, total / tokens\n";
  out += '\n';
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::string line = r.name + std::string(w0 - r.name.size() + 2, ' ') + std::string(w1 - r.decode.size(), ' ') + r.decode;
    if (prefill) line += std::string(w2 - r.prefill.size() + 2, ' ') + r.prefill;
    out += line + '\n';
    if (i == 0) out += std::string(line.size(), '-') + '\n';
  }
  return out;
}

}  // namespace lm
