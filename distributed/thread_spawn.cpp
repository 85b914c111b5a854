// distributed/thread_spawn.cpp: starting and ending the thread backend's ranks: spawn starts one
// thread per rank (Note [A thread that cannot start]), and a rank whose fn returned completes the
// rounds it can and fails the job for those that can never complete (Note [A round completes once
// every rank has issued it], thread_world.h).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

#include "core/util/error.h"
#include "distributed/functional_collectives.h"
#include "distributed/thread_backend.h"
#include "distributed/thread_world.h"

namespace strata::distributed {

using namespace detail;  // the world's state, and what a rank does to it (thread_world.h)

void detail::fail_job(World& root, std::string message) {
  const std::lock_guard<std::mutex> lock(root.mutex);
  if (!root.job_failure) root.job_failure = std::move(message);
}

namespace {

std::atomic<int> fail_start_of{-1};  // Note [A thread that cannot start]

// Rank `rank` of the spawned world returned (or threw, with `failure`): every group it is in learns it
// (Note [A rank that fails]); it does the unclaimed shares of every complete round, and leaves every
// round. A round it never joined that another rank did fails the job, as does a round whose ranks
// disagree that it never waited for.
void exit_rank(World& root, int rank, const std::optional<std::string>& failure) {
  std::vector<std::string> job;
  auto visit = [&](World& group) {
    const auto it = std::find(group.root_ranks.begin(), group.root_ranks.end(), rank);
    if (it == group.root_ranks.end()) return;
    const int me = static_cast<int>(it - group.root_ranks.begin());
    std::unique_lock<std::mutex> lock(group.mutex);
    group.exited[static_cast<std::size_t>(me)] = true;
    if (failure && !group.failure) group.failure = "rank " + std::to_string(rank) + " failed: " + *failure;
    group.changed.notify_all();
    std::vector<std::uint64_t> numbers;
    for (const auto& [number, round] : group.rounds) numbers.push_back(number);
    for (const std::uint64_t number : numbers) {
      const auto found = group.rounds.find(number);
      if (found == group.rounds.end()) continue;
      Round& round = found->second;
      if (round.abandoned_by >= 0) continue;
      if (!round.complete()) {
        std::vector<int> never;
        for (std::size_t r = 0; r < round.ranks.size(); ++r)
          if (!round.ranks[r].arrived && group.exited[r]) never.push_back(static_cast<int>(r));
        const std::string& what =
            std::find_if(round.ranks.begin(), round.ranks.end(), [](const Contribution& c) { return c.arrived; })->collective;
        if (!never.empty() && !failure)
          job.push_back(what + " (collective #" + std::to_string(number) + " on group '" + group.name + "'): rank" +
                        (never.size() > 1 ? "s " : " ") + rank_list(never) + " returned without joining it");
      } else if (round.error) {
        if (!round.waited[static_cast<std::size_t>(me)]) job.push_back(*round.error);
      } else {
        do_shares(group, round, me, lock);
        while (round.finished < group.size) group.changed.wait(lock);
      }
      leave(group, number, me);
    }
  };
  // The world first: a group split from it after this copies the world's exits and failure.
  visit(root);
  std::vector<std::shared_ptr<World>> groups;
  {
    const std::lock_guard<std::mutex> lock(root.mutex);
    for (const auto& [name, group] : root.groups) groups.push_back(group);
  }
  for (const std::shared_ptr<World>& group : groups) visit(*group);
  if (!job.empty()) fail_job(root, job.front());
}

}  // namespace

void detail::fail_thread_start_for_testing(int rank) { fail_start_of = rank; }

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
  threads.reserve(static_cast<std::size_t>(world_size));
  std::optional<std::string> not_started;
  for (int rank = 0; rank < world_size && !not_started; ++rank) {
    auto run = [&, rank] {
      std::optional<std::string> failure;
      try {
        register_process_group(detail::make_thread_group(rank, world, world));
        fn(rank);
      } catch (const std::exception& e) {
        failure = e.what();
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      } catch (...) {
        failure = "an exception that is not a std::exception";
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
      unregister_process_group(kWorldGroupName);
      if (failure) {
        const std::lock_guard<std::mutex> lock(world->mutex);
        order.push_back(rank);
      }
      exit_rank(*world, rank, failure);
    };
    // Note [A thread that cannot start]
    // When the system refuses a thread (EAGAIN: a pids or memory limit), the ranks already started
    // must not wait for the rest: the world (and every group split from it, now or later) fails with
    // the reason, so their collectives fail at once; spawn joins them and raises the reason.
    // fail_thread_start_for_testing makes the refusal happen on demand.
    try {
      if (rank == fail_start_of.load()) throw std::system_error(EAGAIN, std::generic_category());
      threads.emplace_back(run);
    } catch (const std::system_error& e) {
      not_started = "could not start the thread of rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
                    ": " + e.code().message();
      std::vector<std::shared_ptr<World>> groups{world};
      {
        const std::lock_guard<std::mutex> lock(world->mutex);
        for (const auto& [name, group] : world->groups) groups.push_back(group);
      }
      for (const std::shared_ptr<World>& group : groups) {
        {
          const std::lock_guard<std::mutex> lock(group->mutex);
          if (!group->failure) group->failure = "spawn " + *not_started;
        }
        group->changed.notify_all();
      }
    }
  }
  for (std::thread& t : threads) t.join();
  if (not_started) throw Error("spawn: " + *not_started);
  if (order.empty()) {
    if (world->job_failure) throw Error("spawn: " + *world->job_failure);
    return;
  }
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
