// distributed/thread_backend.h: the thread backend (upstream's multi-threaded test process group):
// spawn(world_size, fn) runs an SPMD function on world_size threads of this process, one rank each,
// whose collectives meet in shared memory. Each rank is an ordinary thread, so it has its own
// dispatch-mode stack, grad mode and group table: per-rank modes and counters work as they would in
// separate processes.
#pragma once

#include <chrono>
#include <functional>

namespace strata::distributed {

struct SpawnOptions {
  // How long a collective's wait may wait for the other ranks to arrive before it fails with an error
  // naming the collective and the ranks missing. Upstream's default process-group timeout;
  // milliseconds::max() never expires.
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
};

// The name each rank's world group is registered under (upstream names groups "0", "1", ... in the
// order they are made; the world is the first).
inline constexpr const char* kWorldGroupName = "0";

// Note [A rank that fails]
// spawn runs fn(rank) on world_size new threads, with the world group registered on each as "0", and
// returns when every rank has returned. If a rank throws, the world is marked failed: every rank
// waiting on a collective (now or later) gets an error naming the failed rank, so none waits
// forever, and spawn then throws the first failure, prefixed with its rank. A rank that returns while
// others still wait for it in a collective fails them the same way, and the job: spawn throws an
// error naming the collective and the ranks that never joined it. Collectives that every rank issued
// are complete when spawn returns, waited for or not (Note [A round completes once every rank has
// issued it]). A thread the system refuses makes spawn join the ranks started and throw. world_size
// must be 1 to 1024.
void spawn(int world_size, const std::function<void(int rank)>& fn, SpawnOptions options = {});

// Runs an SPMD function wherever this program's ranks are: when this thread already has a world
// group (MPI started by init_mpi, or inside spawn), fn(rank) runs once, here, as this process's or
// thread's rank, and world_size must be that world's size; otherwise spawn(world_size, fn).
void run_spmd(int world_size, const std::function<void(int rank)>& fn, SpawnOptions options = {});

}  // namespace strata::distributed
