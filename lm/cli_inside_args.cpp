// lm/cli_inside_args.cpp: parse_inside_flag and check_inside_flags.
#include "cli_inside_args.h"

#include <strata/core/util/error.h>

namespace lm {

bool parse_inside_flag(std::span<const std::string> args, std::size_t& i, CliOptions& o) {
  const std::string& a = args[i];
  if (a == "--debug-step") {
    o.debug_step = true;
  } else if (a == "--flops") {
    o.flops = true;
  } else if (a == "--fake") {
    o.fake = true;
  } else if (a == "--profile" || a == "--config") {
    STRATA_CHECK(i + 1 < args.size(), "strata-lm: ", a, " needs a value (", a == "--profile" ? "FILE" : "CONFIG.json", ")");
    (a == "--profile" ? o.profile : o.config) = args[++i];
    STRATA_CHECK(!args[i].empty(), "strata-lm: ", a, " needs a file name, got \"\"");
  } else {
    return false;
  }
  return true;
}

void check_inside_flags(const CliOptions& o, bool have_model) {
  if (o.help) return;
  const bool inspect = o.debug_step || o.flops;
  if (o.fake) {
    STRATA_CHECK(!o.config.empty(), "strata-lm: --fake needs --config CONFIG.json (a Hugging Face config.json)");
    STRATA_CHECK(!have_model, "strata-lm: --fake builds the model from --config; give no MODEL");
    STRATA_CHECK(!inspect && o.profile.empty(), "strata-lm: --fake prints its own report (its FLOPs included); it ",
                 "does not combine with --debug-step, --flops or --profile");
  } else {
    STRATA_CHECK(o.config.empty(), "strata-lm: --config is read only with --fake");
  }
  STRATA_CHECK(o.profile.empty() || !inspect, "strata-lm: --profile traces a generation; --debug-step and --flops ",
               "inspect one step without generating: choose one");
}

}  // namespace lm
