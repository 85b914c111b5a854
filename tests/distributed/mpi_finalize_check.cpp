// tests/distributed/mpi_finalize_check.cpp: finalize_mpi and the collectives nobody waited for
// (Note [finalize_mpi completes every collective]), one process per rank under mpirun, run by
// mpi_finalize_check.py. `unwaited`: every rank issues collectives and never waits; after
// finalize_mpi their outputs hold the results, and wait_tensor returns them (exit 0 when they do).
// `missing`: rank 0 issues an all_reduce that rank 1 never does; finalize_mpi throws on every rank,
// which prints the error and exits 3 at once (MPI cannot end with the collective pending).
// `disagree` (with STRATA_DISTRIBUTED_DEBUG=DETAIL): the ranks issue an all_reduce of different
// sizes that nobody waits for; finalize_mpi throws its error on every rank the same way.
#include <cstdlib>
#include <iostream>
#include <string>

#include "distributed/functional_collectives.h"
#include "distributed/mpi_backend.h"
#include "distributed/process_group.h"
#include "ops/functions.h"

using namespace strata;
using namespace strata::distributed;

int main(int argc, char** argv) {
  init_mpi(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  const int rank = resolve_process_group("0").rank(), n = resolve_process_group("0").size();
  if (mode == "unwaited") {
    const Tensor avg = all_reduce(full({3}, rank + 1.0), "avg", "0");  // finished by the division at the wait
    const Tensor rows = all_to_all_single(full({n, 2}, static_cast<double>(rank)), {}, {}, "0");
    const std::string pair = split_group({{0, 1}});  // a group of its own, and a collective in it
    const Tensor in_pair = pair.empty() ? Tensor() : all_gather_into_tensor(full({1}, rank + 1.0), 2, pair);
    finalize_mpi();
    bool ok = wait_tensor(avg).to_vector<double>() == std::vector<double>(3, (n + 1) / 2.0);
    std::vector<double> expected;
    for (int j = 0; j < n; ++j) expected.insert(expected.end(), {1.0 * j, 1.0 * j});
    ok = ok && wait_tensor(rows).to_vector<double>() == expected;
    if (in_pair.defined()) ok = ok && wait_tensor(in_pair).to_vector<double>() == std::vector<double>{1, 2};
    std::cout << "rank " << rank << (ok ? ": every collective completed" : ": a collective did not complete") << std::endl;
    return ok ? 0 : 1;
  }
  if (mode == "missing" || mode == "disagree") {
    if (mode == "disagree") (void)all_reduce(ones({rank + 2}), "sum", "0");  // never waited for
    else if (rank == 0) (void)all_reduce(ones({2}), "sum", "0");
    try {
      finalize_mpi();
    } catch (const Error& e) {
      std::cout << "rank " << rank << ": " << e.what() << std::endl;
      std::_Exit(3);
    }
    std::cout << "rank " << rank << ": finalize_mpi returned" << std::endl;
    return 0;
  }
  std::cerr << "usage: mpi_finalize_check unwaited|missing|disagree" << std::endl;
  finalize_mpi();
  return 2;
}
