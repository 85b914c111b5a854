// distributed/mpi_backend.h: the MPI backend, what carries strata past one machine. The same SPMD
// program as on the thread backend, one rank per process, launched with `mpirun -np N`; each
// collective is a non-blocking MPI call (MPI_Iallreduce, MPI_Iallgather, ...) completed at
// wait_tensor. Built when meson finds MPI (the `mpi` feature option); mpi_available() says whether it
// was.
#pragma once

namespace strata::distributed {

// Whether this build has the MPI backend.
bool mpi_available();

// Note [Starting MPI]
// init_mpi initialises MPI (MPI_Init_thread, asking for MPI_THREAD_SERIALIZED: strata calls MPI from
// one thread at a time) unless it already is, and registers MPI_COMM_WORLD as the group "0" on the
// calling thread, which then runs the program; finalize_mpi completes every collective nobody waited
// for, or throws on every rank, naming it, if a rank never issued one that another did (Note
// [finalize_mpi completes every collective]), then unregisters the group and finalises MPI (once, at
// the end: MPI cannot be started again). With STRATA_DISTRIBUTED_DEBUG=DETAIL in the environment
// (upstream's TORCH_DISTRIBUTED_DEBUG idea), every collective first exchanges a description of
// itself (which collective, dtype, sizes, reduce op, root, all_to_all_single's splits) and fails at
// every rank's wait if any rank's differs, instead of corrupting data or deadlocking; the exchange
// does not block the issue either (Note [DETAIL checks without blocking], mpi_work.h). Both throw
// strata::Error without MPI.
// Unlike the thread backend, which copies, MPI reads a collective's input until it is waited for
// (Note [MPI reads the input until the wait]): do not write it in between.
void init_mpi(int* argc, char*** argv);
void finalize_mpi();

// Note [How MPI collectives make progress]
// Every collective starts as a non-blocking MPI call and returns at once, whether or not the other
// ranks have issued it (under STRATA_DISTRIBUTED_DEBUG=DETAIL, its exchange of descriptions too, and
// the collective starts at a progress point once they agree); its wait blocks in MPI_Wait. Open MPI runs
// non-blocking collectives (libnbc's schedules) only inside MPI calls, and strata starts no progress
// thread (it would take a core, and MPI_THREAD_MULTIPLE). So a collective advances when this rank
// calls MPI: at its wait, when a later collective is issued (the issue tests every pending one of
// its group once, MPI_Test), and in mpi_progress(), which tests every pending collective of every
// group once without blocking: a program that computes between the issue and the wait may call it
// between ops. Small messages complete in the first call; a large one advances a step per call.
void mpi_progress();

}  // namespace strata::distributed
