// tracer/cli/strata_trace_main.cpp: the strata-trace executable (see tracer/cli/trace_cli.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "distributed/mpi_backend.h"
#include "distributed/process_group.h"
#include "core/util/error.h"
#include "io/temp_file_registry.h"
#include "tracer/cli/trace_cli.h"

namespace {

// Note [strata-trace under mpirun]
// Launched by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE) in a build with the MPI backend, every
// process starts MPI and runs the same command; the report's traced step then runs data-parallel
// with one rank per process (run_spmd), --world-size defaulting to the MPI world's size, and so do
// --debug's and --trace's steps. Rank 0 prints the report and publishes the files (--debug and
// --trace: the rank --rank names prints its log); the other ranks print only errors, prefixed with
// their rank. Every rank opens and writes the files' temporaries, so that a path that cannot be
// written stops every rank before a collective waits for the one it stopped.
int run_under_mpi(int argc, char** argv) {
  strata::distributed::init_mpi(&argc, &argv);
  const strata::distributed::ProcessGroup& world = strata::distributed::resolve_process_group("0");
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--world-size") == args.end()) {
    args.push_back("--world-size");
    args.push_back(std::to_string(world.size()));
  }
  int printer = 0;  // the rank that prints
  try {
    const strata::tracer::TraceOptions o = strata::tracer::parse_trace_args(args);
    if (o.debug || o.trace) printer = static_cast<int>(o.rank.value_or(0));
  } catch (const strata::Error&) {  // every rank reports it below
  }
  int code = 0;
  if (world.rank() == printer) {
    code = strata::tracer::run_trace_cli(args, std::cout, std::cerr);
  } else {
    std::ostringstream discarded, errors;
    code = strata::tracer::run_trace_cli(args, discarded, errors);
    if (!errors.str().empty()) std::cerr << "[rank " << world.rank() << "] " << errors.str();
  }
  strata::distributed::finalize_mpi();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  strata::tracer::install_temp_file_cleanup_on_signals();  // Note [Temporary files and signals]
  const bool mpi = strata::distributed::mpi_available() && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  const int code = mpi ? run_under_mpi(argc, argv)
                       : strata::tracer::run_trace_cli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  // run_trace_cli flushes and checks std::cout; this catches anything still buffered in stdout.
  if (code == 0 && (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    std::cerr << "strata-trace: error: cannot write standard output\n";
    return 2;
  }
  return code;
}
