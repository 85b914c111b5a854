// tests/install/app/mpi_app.cpp: an app of the installed MPI backend (libstrata_mpi), run by
// tests/install/test_install.sh under `mpirun -np 2`: an all_reduce and a DistributedDataParallel
// backward across the processes. Every rank checks; rank 0 prints what they all found, one line each.
#include <iostream>
#include <string>

#include <strata/distributed/functional_collectives.h>
#include <strata/distributed/mpi_backend.h>
#include <strata/distributed/process_group.h>

#include "ddp_check.h"

using namespace strata;

int main(int argc, char** argv) {
  distributed::init_mpi(&argc, &argv);
  const int rank = distributed::resolve_process_group("0").rank();
  const int world = distributed::resolve_process_group("0").size();
  const Tensor total = distributed::wait_tensor(distributed::all_reduce(full({2}, static_cast<double>(rank + 1)), "sum", "0"));
  const app::DdpCase ddp_case = app::make_ddp_case();
  const std::string verdict = app::check_ddp(ddp_case, app::rank_model(ddp_case, rank), rank, world);
  // How many ranks found what rank 0 expects, summed over the ranks.
  const bool ok = total.str() == "tensor([3., 3.])" && verdict == "same parameters and gradients as one process";
  const Tensor agreeing = distributed::wait_tensor(distributed::all_reduce(full({1}, ok ? 1.0 : 0.0), "sum", "0"));
  if (rank == 0) {
    std::cout << "MPI: " << world << " processes, mpi_available " << distributed::mpi_available() << "\n"
              << "all_reduce on rank 0: " << total << "\n"
              << "DistributedDataParallel on rank 0: " << verdict << "\n"
              << "ranks that found both: " << agreeing.item<double>() << "\n";
  }
  distributed::finalize_mpi();
  return ok ? 0 : 1;
}
