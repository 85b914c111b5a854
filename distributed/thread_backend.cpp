// distributed/thread_backend.cpp: ranks as threads. Each collective is a round that every rank
// joins with its input and output; a rank's wait blocks until all have joined, checks that they agree,
// and does its share of the work on the shared tensors (Note [A round computes at wait]); the shares
// themselves are thread_round.cpp's.
#include "distributed/thread_backend.h"

#include <algorithm>
#include <exception>
#include <sstream>
#include <thread>

#include "core/util/error.h"
#include "distributed/functional_collectives.h"
#include "distributed/thread_world.h"

namespace strata::distributed {

using detail::Contribution;
using detail::Round;
using detail::World;

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out << (i ? ", " : "") << ranks[i];
  return out.str();
}

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
      detail::copy_row_major(input, c.copy);
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
  detail::check_agreement(round, number_);  // the round is complete: no rank writes it any more
  detail::compute_share(round, rank_);
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
