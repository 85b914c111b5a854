// distributed/process_group.h: process groups (PyTorch's c10d::ProcessGroup): a rank's view of a
// set of ranks that run collectives together, named so that ops can carry the name as a string
// (upstream's functional collectives take `str group_name`), and the reductions they apply.
// The backends are in thread_backend.h (ranks as threads of one process), mpi_backend.h and
// fake_process_group.h (one rank that only pretends to communicate).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../core/util/array_ref.h"
#include "../core/tensor.h"
#include "reduce_op.h"

namespace strata::distributed {

// A collective in flight on this rank (upstream's c10d::Work). wait() returns once this rank's
// output holds the result, and throws strata::Error if the collective failed (a rank that failed,
// ranks that disagree, a timeout). Waiting again after success returns at once. A collective
// completes once every rank has issued it, waited for or not (spawn's end and finalize_mpi complete
// the ones nobody waited for; docs/distributed.md).
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
};

// One rank's handle on a group. Each collective starts on this rank's tensors and returns its Work;
// `output` is allocated by the caller with the result's sizes (contiguous, the input's dtype) and
// holds the result once the Work is waited for. `input` may be changed after the call returns.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& name() const { return name_; }

  virtual std::shared_ptr<Work> all_reduce(const Tensor& input, const Tensor& output, ReduceOp op) = 0;
  // The ranks' inputs concatenated along dim 0, in rank order.
  virtual std::shared_ptr<Work> all_gather_into_tensor(const Tensor& input, const Tensor& output) = 0;
  // The ranks' inputs reduced, and this rank's slice of dim 0 (input.size(0) / size() rows).
  virtual std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& input, const Tensor& output, ReduceOp op) = 0;
  // Rank r sends its input's i-th dim-0 chunk (input_splits[i] rows; equal chunks when empty) to rank
  // i, and receives output_splits[j] rows from each rank j, in rank order.
  virtual std::shared_ptr<Work> all_to_all_single(const Tensor& input, const Tensor& output, IntArrayRef output_splits,
                                                  IntArrayRef input_splits) = 0;
  // Rank `src`'s input, on every rank.
  virtual std::shared_ptr<Work> broadcast(const Tensor& input, const Tensor& output, int src) = 0;

  // Whether the collectives accept tensors without data (meta and fake tensors), which they neither
  // read nor write: true for the fake group (fake_process_group.h), whose collectives communicate
  // nothing, so in-place ops like c10d::allreduce_ run on it under FakeTensorMode.
  virtual bool accepts_data_less_tensors() const { return false; }

  // split_group's work on one rank (every rank of this group calls it): this rank's handle on the
  // group of `members` (ranks of this group, in their new rank order) named `name`, the `index`-th
  // list of the split; null when the caller is in no list (members empty, index -1).
  virtual std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& members, const std::string& name,
                                                      int index) = 0;

 protected:
  ProcessGroup(int rank, int size, std::string name) : rank_(rank), size_(size), name_(std::move(name)) {}

 private:
  int rank_;
  int size_;
  std::string name_;
};

// Note [Group names are per thread]
// Upstream resolves a group_name string to the process's group of that name
// (_resolve_process_group). On the thread backend every rank is a thread of one process, and each
// must find its own handle under the shared name, so the table is per thread: a rank registers its
// groups on its own thread, and ops on that thread resolve them. Under MPI (one rank per process) a
// per-thread table is the process's table for the thread that runs the program.
void register_process_group(std::shared_ptr<ProcessGroup> group);  // an error if the name is taken here
void unregister_process_group(std::string_view name);
ProcessGroup& resolve_process_group(std::string_view name);  // an error naming the group if unknown
ProcessGroup* find_process_group(std::string_view name);     // null if unknown
// upstream's destroy_process_group() without a group: forgets every group registered on this thread
// and restarts the names, so the next world registered is "0" and the next split's first group "1".
void destroy_process_groups();
// How many times destroy_process_groups ran on this thread. What a thread derives from its groups
// and caches (the sharding propagation's cache: its specs hold meshes, whose groups and this rank's
// coordinate are the ended world's) is stale once this changes (Note [A new world empties the caches]).
std::uint64_t process_groups_epoch();

// The split sizes of an all_to_all_single over a group of `group_size` ranks: `splits` as given (one
// entry per rank), or, when empty, `rows` in equal parts (upstream's default). `which` names the
// argument in the error: a list of the wrong length, or rows the group's size does not divide.
std::vector<std::int64_t> splits_or_equal(IntArrayRef splits, std::int64_t rows, int group_size, const char* which);

// Note [Splitting a group]
// upstream's split_group(parent, split_ranks): every rank of the parent calls it with the same
// partition of the parent's ranks into disjoint lists (ranks left out get no group); each list becomes
// a group, named by upstream's rule of a counter over the groups made so far ("1", "2", ... after the
// world's "0"), which every rank advances alike. Returns the name of the caller's group, registered
// on this thread, or an empty string if the caller is in no list. A 2-D mesh splits the world twice,
// into rows and into columns.
std::string split_group(const std::vector<std::vector<int>>& split_ranks, std::string_view parent = "0");

}  // namespace strata::distributed
