// distributed/thread_backend.cpp: ranks as threads. Each collective is a round that every rank
// joins with its input and output; the last to join checks that they agree, and a rank's wait blocks
// until all have joined and the work on the shared tensors is done (Note [A round computes at wait]);
// the shares of that work are thread_round.cpp's, starting and ending the ranks thread_spawn.cpp's.
#include "distributed/thread_backend.h"

#include <algorithm>
#include <exception>

#include "core/util/error.h"
#include "distributed/functional_collectives.h"
#include "distributed/thread_world.h"

namespace strata::distributed {

using detail::Contribution;
using detail::Round;
using detail::World;
using detail::do_shares;
using detail::fail_job;
using detail::leave;
using detail::rank_list;

namespace {

// Note [A round computes at wait]
// Issuing a collective puts the rank's input and output into the round and returns at once: the
// collective is asynchronous, and its result exists only after wait(). Inputs are read where they
// are (a non-contiguous one is copied first), so, as with MPI, an input must not be written between
// the issue and the wait. The last rank to join checks that all joined the same collective with
// matching tensors (else every rank's wait fails with the same error, rather than reading garbage).
// The wait blocks until every rank has joined the round, then does the shares of the work nobody
// took yet, its own first (Note [A round completes once every rank has issued it], thread_world.h):
// for all_reduce, share r reduces the r-th of N slices of every input, in rank order, and writes it
// into every rank's output, so each element is computed once and every rank gets the same bits; for
// all_gather, share r writes rank r's input into every output; for the others, share r fills rank
// r's output. It then waits for the shares others took, so no output is returned unfinished and no
// input is written while another rank still reads it. The shares touch disjoint slices, so
// all_reduce_ (output and input one tensor) works the same way: share r reduces slice r of every
// input into a buffer of its own before it writes slice r of every output, and no other share
// touches slice r (Note [An all_reduce share is reduced a block at a time]).
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
      if (!slot) {
        slot = std::make_shared<World>(static_cast<int>(members.size()), root_->timeout, name, root_ranks);
        slot->failure = root_->failure;  // a rank that failed, or a thread that never started
        for (std::size_t i = 0; i < root_ranks.size(); ++i)  // and the ranks already gone
          slot->exited[i] = root_->exited[static_cast<std::size_t>(root_ranks[i])];
      }
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
    c.output_splits = splits_or_equal(output_splits, output.size(0), size(), "output_splits");
    c.input_splits = splits_or_equal(input_splits, input.size(0), size(), "input_splits");
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

// The deadline `timeout` from now, or none when it lies past what the clock holds (milliseconds::max()).
std::optional<std::chrono::steady_clock::time_point> deadline_after(std::chrono::milliseconds timeout) {
  const auto now = std::chrono::steady_clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::time_point::max() - now);
  if (timeout >= room) return std::nullopt;
  return now + timeout;
}

std::shared_ptr<Work> ThreadGroup::join(Contribution c, const Tensor& output) {
  const std::uint64_t number = next_++;
  c.output = output;
  c.out = static_cast<std::byte*>(output.impl()->data());
  std::optional<std::string> unseen;  // the ranks disagree, and a rank that returned will never know
  {
    const std::lock_guard<std::mutex> lock(world_->mutex);
    Round& round = world_->rounds[number];
    const auto n = static_cast<std::size_t>(world_->size);
    if (round.ranks.empty()) {
      round.ranks.resize(n);
      round.claimed.assign(n, false);
      round.left.assign(n, false);
      round.waited.assign(n, false);
    }
    round.ranks[static_cast<std::size_t>(rank())] = std::move(c);
    ++round.arrived;
    if (round.complete()) {
      try {
        detail::check_agreement(round, number);
      } catch (const Error& e) {
        round.error = e.what();
        for (std::size_t r = 0; r < n; ++r)
          if (round.left[r] && !round.waited[r]) unseen = round.error;
      }
    }
  }
  world_->changed.notify_all();
  if (unseen) fail_job(*root_, *unseen);
  return std::make_shared<ThreadWork>(world_, number, rank());
}

void ThreadWork::wait() {
  if (done_) return;
  std::unique_lock<std::mutex> lock(world_->mutex);
  Round& round = world_->rounds.at(number_);  // this rank has not left it: it is still there
  const std::string collective = round.ranks[static_cast<std::size_t>(rank_)].collective;
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
  const auto deadline = deadline_after(world_->timeout);
  while (!world_->failure && round.abandoned_by < 0 && !round.complete() && gone() < 0) {
    if (!deadline) world_->changed.wait(lock);
    else if (world_->changed.wait_until(lock, *deadline) == std::cv_status::timeout) break;
  }
  STRATA_CHECK(round.abandoned_by < 0, collective, " (collective #", number_, " on group '", world_->name, "') cannot "
               "complete: rank ", round.abandoned_by, " timed out waiting for it");
  if (!round.complete()) {
    STRATA_CHECK(!world_->failure, collective, " (collective #", number_, " on group '", world_->name,
                 "') cannot complete: ", *world_->failure);
    const int left = gone();
    STRATA_CHECK(left < 0, collective, " (collective #", number_, " on group '", world_->name, "'): rank ", left,
                 " returned without joining it");
    round.abandoned_by = rank_;
    world_->changed.notify_all();
    const std::vector<int> absent = missing();
    STRATA_CHECK(false, collective, " (collective #", number_, " on group '", world_->name, "') timed out after ",
                 world_->timeout.count(), " ms waiting for rank", absent.size() > 1 ? "s " : " ", rank_list(absent));
  }
  round.waited[static_cast<std::size_t>(rank_)] = true;
  if (round.error) {
    const std::string error = *round.error;
    leave(*world_, number_, rank_);
    throw Error(error);
  }
  // Note [A round completes once every rank has issued it]: shares nobody took yet, then the others'.
  do_shares(*world_, round, rank_, lock);
  while (round.finished < world_->size) world_->changed.wait(lock);
  done_ = true;
  leave(*world_, number_, rank_);
}

}  // namespace

std::shared_ptr<ProcessGroup> detail::make_thread_group(int rank, std::shared_ptr<World> world, std::shared_ptr<World> root) {
  return std::make_shared<ThreadGroup>(rank, std::move(world), std::move(root));
}

}  // namespace strata::distributed
