// lm/cli.h: strata-lm as a function, so that tests run it in-process: parses the arguments, loads
// the model and the tokenizer, generates, streaming each token's text to `out` as it comes, then
// prints a newline to `out` and `achieved tok/s: N` to `err`, as run.c does.
#pragma once

#include <ostream>
#include <span>
#include <string>

namespace lm {

// Returns the exit code: 0, or 2 after one line `strata-lm: <what went wrong>` on `err`.
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace lm
