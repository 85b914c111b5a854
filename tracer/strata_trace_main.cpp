// tracer/strata_trace_main.cpp: the strata-trace executable (see tracer/trace_cli.h).
#include <iostream>

#include "tracer/trace_cli.h"

int main(int argc, char** argv) {
  return strata::tracer::run_trace_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
