// lm/strata_lm_main.cpp: the strata-lm executable (lm/cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return lm::run_cli(args, std::cout, std::cerr);
}
