// distributed/thread_backend.cpp: ranks as threads. Each collective is a round that every rank
// joins with its input and output; a rank's wait blocks until all have joined, checks that they agree,
// and does its share of the work on the shared tensors (Note [A round computes at wait]).
#include "distributed/thread_backend.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "core/util/error.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"

namespace strata::distributed {

namespace {

// Note [A round computes at wait]
// Issuing a collective puts the rank's input and output into the round and returns at once: the
// collective is asynchronous, and its result exists only after wait(). Inputs are read where they
// are (a non-contiguous one is copied first), so, as with MPI, an input must not be written between
// the issue and the wait. The wait blocks until every rank has joined the round, checks that all
// joined the same collective with matching tensors (else every rank fails with the same error,
// rather than reading garbage), then does this rank's share of the work: for all_reduce, rank r
// reduces the r-th of N slices of every input, in rank order, and writes it into every rank's
// output, so each element is computed once and every rank gets the same bits; for all_gather, rank
// r writes its input into every output; for the others, each rank fills its own output. A second
// barrier then waits for every rank's share, so no output is returned unfinished and no input is
// written while another rank still reads it; the last rank to leave drops the round. The shares touch
// disjoint slices, so all_reduce_ (output and input one tensor) works the same way: rank r reduces
// slice r of every input into a buffer of its own before it writes slice r of every output, and no
// other rank touches slice r (Note [An all_reduce share is reduced a block at a time]).
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
void copy_row_major(const Tensor& t, Buffer& out) {
  const std::size_t item = element_size(t.dtype());
  if (out.empty()) return;
  const auto* base = static_cast<const std::byte*>(t.impl()->data());
  if (t.is_contiguous()) {
    std::memcpy(out.data(), base, out.size);
    return;
  }
  const std::size_t dims = t.sizes().size();
  std::vector<std::int64_t> index(dims, 0);
  for (std::size_t k = 0; k < static_cast<std::size_t>(t.numel()); ++k) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < dims; ++d) offset += index[d] * t.strides()[d];
    std::memcpy(out.data() + k * item, base + offset * static_cast<std::int64_t>(item), item);
    for (std::size_t d = dims; d-- > 0;) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
}

// out = in[0] f in[1] f ... in rank order, a whole row at a time (the first two ranks fused) so each
// loop vectorises.
template <typename T, typename F>
void reduce_with(T* out, const std::vector<const T*>& in, std::size_t n, F f) {
  if (in.size() == 1) {
    std::copy(in[0], in[0] + n, out);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = f(in[0][i], in[1][i]);
  for (std::size_t r = 2; r < in.size(); ++r)
    for (std::size_t i = 0; i < n; ++i) out[i] = f(out[i], in[r][i]);
}

template <typename T>
void reduce_rows(T* out, const std::vector<const T*>& in, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: reduce_with(out, in, n, [](T a, T b) { return a + b; }); break;
    case ReduceOp::Product: reduce_with(out, in, n, [](T a, T b) { return a * b; }); break;
    case ReduceOp::Min: reduce_with(out, in, n, [](T a, T b) { return b < a ? b : a; }); break;
    case ReduceOp::Max: reduce_with(out, in, n, [](T a, T b) { return b > a ? b : a; }); break;
  }
  if (op == ReduceOp::Avg) {
    const T count = static_cast<T>(in.size());
    for (std::size_t i = 0; i < n; ++i) out[i] = out[i] / count;
  }
}

// Reduces `count` elements starting at element `first` of every rank's data into `out`.
void reduce_into(std::byte* out, const std::vector<Contribution>& ranks, std::size_t first, std::size_t count,
                 ScalarType dtype, ReduceOp op) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T*> in;
    for (const Contribution& c : ranks) in.push_back(reinterpret_cast<const T*>(c.in) + first);
    reduce_rows(reinterpret_cast<T*>(out), in, count, op);
  };
  switch (dtype) {
    case ScalarType::Float32: return run(float{});
    case ScalarType::Float64: return run(double{});
    case ScalarType::Int64: return run(std::int64_t{});
    default: STRATA_CHECK(false, "reduction of ", dtype, " tensors is not supported");
  }
}

std::string rank_list(const std::vector<int>& ranks) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out << (i ? ", " : "") << ranks[i];
  return out.str();
}

// Every rank runs the same checks on the same contributions, so all fail alike or none does.
void check_agreement(const Round& round, std::uint64_t number) {
  const Contribution& first = round.ranks[0];
  for (std::size_t r = 1; r < round.ranks.size(); ++r) {
    const Contribution& c = round.ranks[r];
    STRATA_CHECK(c.collective == first.collective, "collective #", number, ": rank 0 called ", first.collective, " but rank ",
                 r, " called ", c.collective, " (every rank must call the same collectives in the same order)");
    STRATA_CHECK(c.dtype == first.dtype, first.collective, " (collective #", number, "): rank 0's tensor is ", first.dtype,
                 " but rank ", r, "'s is ", c.dtype);
    const bool sizes_must_match = first.collective != "all_to_all_single";
    STRATA_CHECK(!sizes_must_match || c.sizes == first.sizes, first.collective, " (collective #", number,
                 "): rank 0's tensor has sizes ", shape_str(first.sizes), " but rank ", r, "'s has ", shape_str(c.sizes));
    STRATA_CHECK(c.op == first.op, first.collective, " (collective #", number, "): rank 0 reduces with ",
                 reduce_op_name(first.op), " but rank ", r, " with ", reduce_op_name(c.op));
    STRATA_CHECK(c.src == first.src, "broadcast (collective #", number, "): rank 0 broadcasts from rank ", first.src,
                 " but rank ", r, " from rank ", c.src);
  }
  if (first.collective != "all_to_all_single") return;
  const std::size_t n = round.ranks.size();
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t sent = round.ranks[j].input_splits[r], received = round.ranks[r].output_splits[j];
      STRATA_CHECK(sent == received, "all_to_all_single (collective #", number, "): rank ", j, " sends ", sent,
                   " rows to rank ", r, ", which expects ", received);
    }
}

class ThreadWork;

class ThreadGroup final : public ProcessGroup {
 public:
  ThreadGroup(int rank, std::shared_ptr<World> world, std::shared_ptr<World> root)
      : ProcessGroup(rank, world->size, world->name), world_(std::move(world)), root_(std::move(root)) {}

  // Note [Splitting a group]: the first member to arrive makes the group's shared state in the root.
  std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& members, const std::string& name, int) override {
    if (members.empty()) return nullptr;
    std::vector<int> root_ranks;
    for (int r : members) root_ranks.push_back(world_->root_ranks[static_cast<std::size_t>(r)]);
    std::shared_ptr<World> group;
    {
      const std::lock_guard<std::mutex> lock(root_->mutex);
      std::shared_ptr<World>& slot = root_->groups[name];
      if (!slot) slot = std::make_shared<World>(static_cast<int>(members.size()), root_->timeout, name, root_ranks);
      STRATA_CHECK(slot->root_ranks == root_ranks, "split_group: the ranks of group '", name, "' disagree on its members");
      group = slot;
    }
    const int my_rank = static_cast<int>(std::find(members.begin(), members.end(), rank()) - members.begin());
    return std::make_shared<ThreadGroup>(my_rank, group, root_);
  }

  std::shared_ptr<Work> all_reduce(const Tensor& input, const Tensor& output, ReduceOp op) override {
    Contribution c = contribution("all_reduce", input);
    c.op = op;
    return join(std::move(c), output);
  }
  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& input, const Tensor& output) override {
    return join(contribution("all_gather_into_tensor", input), output);
  }
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& input, const Tensor& output, ReduceOp op) override {
    Contribution c = contribution("reduce_scatter_tensor", input);
    c.op = op;
    return join(std::move(c), output);
  }
  std::shared_ptr<Work> all_to_all_single(const Tensor& input, const Tensor& output, IntArrayRef output_splits,
                                          IntArrayRef input_splits) override {
    Contribution c = contribution("all_to_all_single", input);
    c.output_splits.assign(output_splits.begin(), output_splits.end());
    c.input_splits.assign(input_splits.begin(), input_splits.end());
    return join(std::move(c), output);
  }
  std::shared_ptr<Work> broadcast(const Tensor& input, const Tensor& output, int src) override {
    Contribution c = contribution("broadcast", input);
    c.src = src;
    return join(std::move(c), output);
  }

 private:
  friend class ThreadWork;
  Contribution contribution(const char* collective, const Tensor& input) {
    Contribution c;
    c.arrived = true;
    c.collective = collective;
    c.dtype = input.dtype();
    c.sizes.assign(input.sizes().begin(), input.sizes().end());
    c.in_bytes = static_cast<std::size_t>(input.numel()) * element_size(input.dtype());
    c.input = input;
    if (input.is_contiguous() || c.in_bytes == 0) {
      c.in = static_cast<const std::byte*>(input.impl()->data());
    } else {
      {
        const std::lock_guard<std::mutex> lock(world_->mutex);
        c.copy = world_->take_buffer(c.in_bytes);
      }
      copy_row_major(input, c.copy);
      c.in = c.copy.data();
    }
    return c;
  }
  std::shared_ptr<Work> join(Contribution c, const Tensor& output);

  std::shared_ptr<World> world_;
  std::shared_ptr<World> root_;
  std::uint64_t next_ = 0;  // this rank's next collective number
};

class ThreadWork final : public Work {
 public:
  ThreadWork(std::shared_ptr<World> world, std::uint64_t number, int rank)
      : world_(std::move(world)), number_(number), rank_(rank) {}
  void wait() override;

 private:
  void compute(const Round& round);
  std::shared_ptr<World> world_;
  std::uint64_t number_;
  int rank_;
  bool done_ = false;
};

std::shared_ptr<Work> ThreadGroup::join(Contribution c, const Tensor& output) {
  const std::uint64_t number = next_++;
  c.output = output;
  c.out = static_cast<std::byte*>(output.impl()->data());
  {
    const std::lock_guard<std::mutex> lock(world_->mutex);
    Round& round = world_->rounds[number];
    if (round.ranks.empty()) round.ranks.resize(static_cast<std::size_t>(world_->size));
    round.ranks[static_cast<std::size_t>(rank())] = std::move(c);
  }
  world_->changed.notify_all();
  return std::make_shared<ThreadWork>(world_, number, rank());
}

void ThreadWork::wait() {
  if (done_) return;
  std::unique_lock<std::mutex> lock(world_->mutex);
  Round& round = world_->rounds.at(number_);
  const std::string& collective = round.ranks[static_cast<std::size_t>(rank_)].collective;
  auto missing = [&] {
    std::vector<int> out;
    for (std::size_t r = 0; r < round.ranks.size(); ++r)
      if (!round.ranks[r].arrived) out.push_back(static_cast<int>(r));
    return out;
  };
  auto gone = [&] {  // a missing rank whose fn already returned will never arrive
    for (int r : missing())
      if (world_->exited[static_cast<std::size_t>(r)]) return r;
    return -1;
  };
  const auto deadline = std::chrono::steady_clock::now() + world_->timeout;
  auto check_alive = [&] {
    STRATA_CHECK(!world_->failure, collective, " (collective #", number_, " on group '", world_->name,
                 "') cannot complete: ", *world_->failure);
    STRATA_CHECK(round.abandoned_by < 0, collective, " (collective #", number_, " on group '", world_->name, "') cannot "
                 "complete: rank ", round.abandoned_by, " timed out waiting for it");
  };
  while (!world_->failure && round.abandoned_by < 0 && !missing().empty() && gone() < 0)
    if (world_->changed.wait_until(lock, deadline) == std::cv_status::timeout) break;
  check_alive();
  const int left = gone();
  STRATA_CHECK(left < 0, collective, " (collective #", number_, " on group '", world_->name, "'): rank ", left,
               " returned without joining it");
  const std::vector<int> absent = missing();
  if (!absent.empty()) {
    round.abandoned_by = rank_;
    world_->changed.notify_all();
    STRATA_CHECK(false, collective, " (collective #", number_, " on group '", world_->name, "') timed out after ",
                 world_->timeout.count(), " ms waiting for rank", absent.size() > 1 ? "s " : " ", rank_list(absent));
  }
  lock.unlock();
  check_agreement(round, number_);  // the round is complete: no rank writes it any more
  compute(round);
  lock.lock();
  ++round.finished;
  world_->changed.notify_all();
  // Every rank's share must be done before this rank's output is whole and its input free.
  while (!world_->failure && round.abandoned_by < 0 && round.finished < world_->size)
    if (world_->changed.wait_until(lock, deadline) == std::cv_status::timeout) break;
  check_alive();
  if (round.finished < world_->size) {
    round.abandoned_by = rank_;
    world_->changed.notify_all();
    STRATA_CHECK(false, collective, " (collective #", number_, " on group '", world_->name, "') timed out after ",
                 world_->timeout.count(), " ms waiting for the other ranks to finish it");
  }
  done_ = true;
  // Every share is done: this rank's tensors are released here, on its own thread (whose allocator
  // cache takes them back for its next collective), not by whichever rank leaves last.
  Contribution& mine = round.ranks[static_cast<std::size_t>(rank_)];
  mine.input = Tensor();
  mine.output = Tensor();
  if (++round.left == world_->size) {
    world_->recycle(round);
    world_->rounds.erase(number_);
  }
}

void ThreadWork::compute(const Round& round) {
  const Contribution& mine = round.ranks[static_cast<std::size_t>(rank_)];
  std::byte* out = mine.out;
  const std::size_t item = element_size(mine.dtype);
  const std::size_t n = round.ranks.size();
  const std::size_t elems = mine.in_bytes / item;
  const std::size_t row = mine.sizes.empty() || mine.sizes[0] == 0 ? 0 : elems / static_cast<std::size_t>(mine.sizes[0]);
  const auto r = static_cast<std::size_t>(rank_);
  if (mine.collective == "all_reduce") {
    // Note [An all_reduce share is reduced a block at a time]
    // This rank's slice of every input is reduced and written to every output one cache-sized block
    // at a time: the block is reduced into a small buffer and copied out while it is still in cache,
    // so each input byte is read once from memory and each output byte written once, and all_reduce_
    // (where this rank's output is an input another rank still reads) needs no slice-sized scratch.
    const std::size_t begin = r * elems / n, end = (r + 1) * elems / n;
    constexpr std::size_t kBlockBytes = std::size_t{64} << 10;
    const std::size_t block = std::max<std::size_t>(1, kBlockBytes / item);
    alignas(64) static thread_local std::byte reduced[kBlockBytes];
    for (std::size_t first = begin; first < end; first += block) {
      const std::size_t count = std::min(block, end - first), bytes = count * item;
      reduce_into(reduced, round.ranks, first, count, mine.dtype, mine.op);
      for (std::size_t k = 0; k < n; ++k) std::memcpy(round.ranks[k].out + first * item, reduced, bytes);
    }
  } else if (mine.collective == "all_gather_into_tensor") {
    if (mine.in_bytes)
      for (std::size_t k = 0; k < n; ++k) std::memcpy(round.ranks[k].out + r * mine.in_bytes, mine.in, mine.in_bytes);
  } else if (mine.collective == "reduce_scatter_tensor") {
    const std::size_t chunk = elems / n;
    if (chunk) reduce_into(out, round.ranks, r * chunk, chunk, mine.dtype, mine.op);
  } else if (mine.collective == "broadcast") {
    const Contribution& src = round.ranks[static_cast<std::size_t>(mine.src)];
    if (src.in_bytes) std::memcpy(out, src.in, src.in_bytes);
  } else {  // all_to_all_single: from each rank j, the rows it sends this rank
    std::size_t written = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const Contribution& from = round.ranks[j];
      std::int64_t skip = 0;
      for (int k = 0; k < rank_; ++k) skip += from.input_splits[static_cast<std::size_t>(k)];
      const std::size_t bytes = static_cast<std::size_t>(from.input_splits[r]) * row * item;
      if (bytes) std::memcpy(out + written, from.in + static_cast<std::size_t>(skip) * row * item, bytes);
      written += bytes;
    }
  }
}

}  // namespace

void spawn(int world_size, const std::function<void(int rank)>& fn, SpawnOptions options) {
  STRATA_CHECK(world_size >= 1 && world_size <= 1024, "spawn: world_size must be from 1 to 1024, got ", world_size);
  STRATA_CHECK(fn, "spawn: the function is empty");
  STRATA_CHECK(options.timeout.count() > 0, "spawn: the timeout must be positive, got ", options.timeout.count(), " ms");
  register_collective_ops();  // before any rank dispatches (functional_collectives.h)
  std::vector<int> everyone(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) everyone[static_cast<std::size_t>(r)] = r;
  auto world = std::make_shared<World>(world_size, options.timeout, kWorldGroupName, everyone);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world_size));
  std::vector<int> order;  // ranks in the order they failed
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      std::string failure;
      try {
        register_process_group(std::make_shared<ThreadGroup>(rank, world, world));
        fn(rank);
      } catch (const std::exception& e) {
        failure = e.what();
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      } catch (...) {
        failure = "an exception that is not a std::exception";
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
      unregister_process_group(kWorldGroupName);
      // Note [A rank that fails]: the world and every group split from it learn that this rank is gone.
      std::vector<std::shared_ptr<World>> groups{world};
      {
        const std::lock_guard<std::mutex> lock(world->mutex);
        if (errors[static_cast<std::size_t>(rank)]) order.push_back(rank);
        for (const auto& [name, group] : world->groups) groups.push_back(group);
      }
      for (const std::shared_ptr<World>& group : groups) {
        {
          const std::lock_guard<std::mutex> lock(group->mutex);
          for (std::size_t i = 0; i < group->root_ranks.size(); ++i)
            if (group->root_ranks[i] == rank) group->exited[i] = true;
          if (errors[static_cast<std::size_t>(rank)] && !group->failure)
            group->failure = "rank " + std::to_string(rank) + " failed: " + failure;
        }
        group->changed.notify_all();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (order.empty()) return;
  const int first = order.front();
  try {
    std::rethrow_exception(errors[static_cast<std::size_t>(first)]);
  } catch (const std::exception& e) {
    throw Error("spawn: rank " + std::to_string(first) + " failed: " + e.what());
  } catch (...) {
    throw Error("spawn: rank " + std::to_string(first) + " failed with an exception that is not a std::exception");
  }
}

void run_spmd(int world_size, const std::function<void(int rank)>& fn, SpawnOptions options) {
  if (const ProcessGroup* world = find_process_group(kWorldGroupName)) {
    STRATA_CHECK(world->size() == world_size, "run_spmd: this program's world has ", world->size(), " ranks, not ", world_size);
    fn(world->rank());
    return;
  }
  spawn(world_size, fn, options);
}

}  // namespace strata::distributed
