// distributed/thread_world.h: the shared state of the thread backend's ranks (thread_backend.cpp):
// a World per group, holding a Round per collective, holding each rank's Contribution; and the work
// done on a complete round (thread_round.cpp). Internal to distributed/: nothing else sees it.
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

struct Round {
  std::vector<Contribution> ranks;
  int finished = 0;  // ranks whose share of the work is done
  int left = 0;      // ranks that have returned from the wait
  int abandoned_by = -1;  // a rank that timed out waiting: the round can no longer complete
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
  std::optional<std::string> failure;     // the first rank failure, once one failed
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

// Copies t's elements, row-major, into `out` (out.size bytes).
void copy_row_major(const Tensor& t, Buffer& out);
// Checks that every rank joined the round with the same collective and matching tensors; every rank
// runs the same checks on the same contributions, so all fail alike or none does.
void check_agreement(const Round& round, std::uint64_t number);
// Does `rank`'s share of a complete round's work (Note [A round computes at wait], thread_backend.cpp).
void compute_share(const Round& round, int rank);

}  // namespace strata::distributed::detail
