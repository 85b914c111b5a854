// tracer/strata_trace_main.cpp: the strata-trace executable (see tracer/trace_cli.h).
#include <cstdio>
#include <iostream>

#include "tracer/temp_file_registry.h"
#include "tracer/trace_cli.h"

int main(int argc, char** argv) {
  strata::tracer::install_temp_file_cleanup_on_signals();  // Note [Temporary files and signals]
  const int code = strata::tracer::run_trace_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  // run_trace_cli flushes and checks std::cout; this catches anything still buffered in stdout.
  if (code == 0 && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    std::cerr << "strata-trace: error: cannot write standard output\n";
    return 2;
  }
  return code;
}
