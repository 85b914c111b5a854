// distributed/thread_world.h: the shared state of the thread backend's ranks (thread_backend.cpp):
// a World per group, holding a Round per collective, holding each rank's Contribution; the work
// done on a complete round (thread_round.cpp); starting and ending the ranks (thread_spawn.cpp).
// Internal to distributed/ (and its tests): nothing else sees it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "process_group.h"

namespace strata::distributed::detail {

// A contribution's copy of its input. Buffers are reused through the world's spares, so a loop of
// large collectives does not map and fault in fresh pages for every copy.
struct Buffer {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t capacity = 0;
  std::size_t size = 0;
  std::byte* data() { return bytes.get(); }
  const std::byte* data() const { return bytes.get(); }
  bool empty() const { return size == 0; }
};

struct Contribution {
  bool arrived = false;
  std::string collective;  // "all_reduce"
  ScalarType dtype = ScalarType::Float32;
  std::vector<std::int64_t> sizes;
  Tensor input;                  // held while the round lives
  Buffer copy;                   // the input's elements, row-major, when it is not contiguous
  const std::byte* in = nullptr;  // the input's elements, row-major (in `input` or `copy`)
  std::size_t in_bytes = 0;
  Tensor output;
  std::byte* out = nullptr;
  ReduceOp op = ReduceOp::Sum;
  int src = 0;
  std::vector<std::int64_t> output_splits, input_splits;
};

// Note [A round completes once every rank has issued it]
// A round is complete when its last rank joins; that rank checks there that the ranks agree (the
// error, if any, is the round's and every waiter throws it). The work is then split into one share
// per rank (thread_round.cpp) that any thread of the group may do: a rank that waits claims the
// round's unclaimed shares (its own first) and does them, then waits for the shares others claimed;
// a rank whose fn returns does every unclaimed share of every complete round before it exits. No
// rank waits for another rank to do its share, so waits in any order complete, and a round nobody
// waits for is still done by the end of spawn. The round is dropped once every share is done and
// every rank has left it (waited for it, or exited).
struct Round {
  std::vector<Contribution> ranks;
  int arrived = 0;
  std::optional<std::string> error;  // the ranks disagree (set when the round completes)
  std::vector<bool> claimed;         // per share: a thread has taken it
  int finished = 0;                  // shares done
  std::vector<bool> left;            // per rank: waited for it, or exited
  std::vector<bool> waited;          // per rank: saw its result or its error
  int abandoned_by = -1;  // a rank that timed out waiting: the round can no longer complete
  bool complete() const { return arrived == static_cast<int>(ranks.size()); }
  bool done() const { return complete() && (error || finished == static_cast<int>(ranks.size())); }
};

// The shared state of one group's ranks: the spawned world, or a group split from it (Note [Splitting
// a group]), which the root world keeps so that a rank's exit or failure reaches every group it is in.
struct World {
  World(int n, std::chrono::milliseconds t, std::string group_name, std::vector<int> ranks_in_root)
      : size(n), timeout(t), name(std::move(group_name)), root_ranks(std::move(ranks_in_root)),
        exited(static_cast<std::size_t>(n), false) {}
  const int size;
  const std::chrono::milliseconds timeout;
  const std::string name;
  const std::vector<int> root_ranks;  // each rank's rank in the spawned world
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::uint64_t, Round> rounds;  // by collective number
  std::vector<bool> exited;               // ranks whose fn returned
  std::optional<std::string> failure;     // why no collective of this group can complete any more
  // The root world only: why the job failed when no rank threw (a collective a rank returned
  // without joining, ranks that disagree on a collective none of them waited for); spawn raises it.
  std::optional<std::string> job_failure;
  std::vector<Buffer> spares;             // buffers of finished rounds, at most 2 per rank
  // The root world only: the groups split from it, by name (all of them, nested splits included).
  std::map<std::string, std::shared_ptr<World>> groups;

  // A buffer of at least `bytes`: a spare that fits, else a new one. Called with `mutex` held.
  Buffer take_buffer(std::size_t bytes) {
    for (std::size_t i = 0; i < spares.size(); ++i)
      if (spares[i].capacity >= bytes && spares[i].capacity <= 2 * bytes + 4096) {
        Buffer b = std::move(spares[i]);
        spares.erase(spares.begin() + static_cast<std::ptrdiff_t>(i));
        b.size = bytes;
        return b;
      }
    return Buffer{std::unique_ptr<std::byte[]>(new std::byte[bytes]), bytes, bytes};
  }
  // Keeps a finished round's buffers for reuse. Called with `mutex` held.
  void recycle(Round& round) {
    for (Contribution& c : round.ranks) {
      if (!c.copy.bytes) continue;
      if (spares.size() >= 2 * static_cast<std::size_t>(size)) spares.erase(spares.begin());
      spares.push_back(std::move(c.copy));
    }
  }
};

// Note [A thread that cannot start]: for tests, makes spawn's start of rank `rank`'s thread fail as
// the system's refusal does (std::system_error, EAGAIN); -1, the default, for none.
void fail_thread_start_for_testing(int rank);

// Copies t's elements, row-major, into `out` (out.size bytes).
void copy_row_major(const Tensor& t, Buffer& out);
// Checks that every rank joined the round with the same collective and matching tensors; every rank
// runs the same checks on the same contributions, so all fail alike or none does.
void check_agreement(const Round& round, std::uint64_t number);
// "1, 2, 3"
std::string rank_list(const std::vector<int>& ranks);
// Does the round's unclaimed shares (`prefer`'s first) until none is left, with `lock` (on the
// group's mutex) held; it is released while a share is computed.
void do_shares(World& world, Round& round, int prefer, std::unique_lock<std::mutex>& lock);
// `rank` of `world` is done with round `number`: its tensors are dropped once every share is done,
// and the round once every rank left. Called with the group's mutex held.
void leave(World& world, std::uint64_t number, int rank);
// The job fails with `message`: spawn raises it unless a rank threw. Called with no lock held.
void fail_job(World& root, std::string message);
// Rank `rank`'s handle on `world`, a group of the spawned world `root` (thread_backend.cpp).
std::shared_ptr<ProcessGroup> make_thread_group(int rank, std::shared_ptr<World> world, std::shared_ptr<World> root);

// Does share `share` of a complete round's work (Note [A round computes at wait], thread_backend.cpp):
// what rank `share` contributes to the outputs, or what it receives.
void compute_share(const Round& round, int share);

}  // namespace strata::distributed::detail
