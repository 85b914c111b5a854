// tests/lm/cli_run.h: strata-lm run in-process (lm::run_cli) with its exit code and both streams.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "../../lm/cli.h"

namespace lm_cli_run {

struct Run {
  int code;
  std::string out, err;
};

inline Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = lm::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace lm_cli_run
