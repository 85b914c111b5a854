// lm/cli_inside_args.h: the command line's "seeing inside" flags (--debug-step, --flops, --profile,
// --fake, --config) and the combinations they refuse.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "cli_args.h"

namespace lm {

// When args[i] is one of the flags, records it in `o` (taking its value, args[i + 1], and advancing
// i past it) and returns true; else returns false. A flag without its value is an error.
bool parse_inside_flag(std::span<const std::string> args, std::size_t& i, CliOptions& o);

// After parsing: --fake needs --config and no MODEL, --config needs --fake, and --fake, --profile
// and the step inspection (--debug-step, --flops) are three different runs: each refuses the others.
void check_inside_flags(const CliOptions& o, bool have_model);

}  // namespace lm
