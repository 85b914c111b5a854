// distributed/mpi_backend.cpp: process groups over MPI_COMM_WORLD (Note [Starting MPI]). Each
// collective checks what it can on this rank, keeps what MPI reads, and starts its non-blocking call
// (under DETAIL, the exchange that precedes it) in an MPIWork (mpi_work.h) that completes it.
#include "distributed/mpi_backend.h"

#include "core/util/error.h"

#ifdef STRATA_HAVE_MPI

#include <mpi.h>

#include <cstdlib>
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/util/checked_math.h"
#include "distributed/functional_collectives.h"
#include "distributed/mpi_work.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

namespace strata::distributed {

namespace {

using detail::Checks;
using detail::MPIWork;
using detail::check_mpi;

MPI_Datatype mpi_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return MPI_FLOAT;
    case ScalarType::Float64: return MPI_DOUBLE;
    case ScalarType::Int64: return MPI_INT64_T;
    default: STRATA_CHECK(false, "the MPI backend does not support tensors of dtype ", t);
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return MPI_SUM;
    case ReduceOp::Product: return MPI_PROD;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
  }
  return MPI_SUM;
}

int mpi_count(std::int64_t n, const char* collective) {
  STRATA_CHECK(n <= std::numeric_limits<int>::max(), collective, ": ", n, " elements is more than MPI's int counts take");
  return static_cast<int>(n);
}

// Note [MPI reads the input until the wait]
// MPI reads a send buffer until the call completes, so a collective keeps a reference to what it
// sends: the input itself when it is contiguous (no copy, as NCCL and MPI programs do; the caller
// must not write it before wait_tensor), else a contiguous copy.
Tensor sendable(const Tensor& t) { return t.is_contiguous() ? t : clone(t, MemoryFormat::Contiguous); }

bool debug_detail() {
  const char* v = std::getenv("STRATA_DISTRIBUTED_DEBUG");
  return v && std::string(v) == "DETAIL";
}

class MPIGroup;
std::vector<std::weak_ptr<MPIGroup>>& groups_made() {  // every group this process made, for finalize_mpi
  static std::vector<std::weak_ptr<MPIGroup>> groups;
  return groups;
}

class MPIGroup final : public ProcessGroup {
 public:
  MPIGroup(MPI_Comm comm, int rank, int size, std::string name)
      : ProcessGroup(rank, size, std::move(name)), comm_(comm), detail_(debug_detail()) {
    // finalize_mpi's own communicator: its exchange must not match a collective a rank issued on
    // comm_ that another never did (Note [finalize_mpi completes every collective]).
    check_mpi(MPI_Comm_dup(comm_, &counts_comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(counts_comm_, MPI_ERRORS_RETURN);
    if (!detail_) return;  // Note [DETAIL checks without blocking]: the exchanges' own communicator
    check_mpi(MPI_Comm_dup(comm_, &check_comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(check_comm_, MPI_ERRORS_RETURN);
  }
  ~MPIGroup() override {
    int done = 0;
    MPI_Finalized(&done);
    if (done) return;
    try {  // DETAIL: start what is held back while the communicators exist (the works may outlive the group)
      while (checks_->advance(true)) {
      }
    } catch (...) {  // an MPI failure: the works that were not started report theirs at their wait
    }
    MPI_Comm_free(&counts_comm_);
    if (check_comm_ != MPI_COMM_NULL) MPI_Comm_free(&check_comm_);
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  static std::shared_ptr<MPIGroup> make(MPI_Comm comm, int rank, int size, std::string name) {
    auto group = std::make_shared<MPIGroup>(comm, rank, size, std::move(name));
    groups_made().push_back(group);
    return group;
  }

  // Note [Splitting a group]: MPI_Comm_split, which every rank of this group joins. Under DETAIL a
  // collective issued before the split may still be held back for its exchange; each rank starts
  // those first, so every rank calls MPI on comm_ in issue order (else MPI sees the collectives and
  // the split in different orders on different ranks and fails the split).
  std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& members, const std::string& name, int index) override {
    while (checks_->advance(true)) {  // Note [DETAIL checks without blocking]
    }
    const int key = members.empty() ? 0 : static_cast<int>(std::find(members.begin(), members.end(), rank()) - members.begin());
    MPI_Comm sub = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(comm_, index < 0 ? MPI_UNDEFINED : index, key, &sub), "MPI_Comm_split");
    if (sub == MPI_COMM_NULL) return nullptr;
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    int sub_rank = 0, sub_size = 0;
    MPI_Comm_rank(sub, &sub_rank);
    MPI_Comm_size(sub, &sub_size);
    return make(sub, sub_rank, sub_size, name);
  }

  // Each collective checks what it can on this rank, then issue() starts its MPI call (Note [DETAIL
  // checks without blocking]); the calls capture the communicator, not the group.
  std::shared_ptr<Work> all_reduce(const Tensor& input, const Tensor& output, ReduceOp op) override {
    const Tensor send = sendable(input);
    // all_reduce_ passes one tensor as both: MPI spells that MPI_IN_PLACE.
    const void* from = send.impl()->data() == output.impl()->data() ? MPI_IN_PLACE : send.impl()->data();
    const int n = mpi_count(output.numel(), "all_reduce");
    const MPI_Datatype type = mpi_type(input.dtype());
    auto work = std::make_shared<MPIWork>(output, std::vector<Tensor>{send}, op == ReduceOp::Avg ? size() : 1);
    return issue(0, work, input, op, 0, {}, {}, [from, to = output.impl()->data(), n, type, op, comm = comm_](MPI_Request* r) {
      check_mpi(MPI_Iallreduce(from, to, n, type, mpi_op(op), comm, r), "MPI_Iallreduce");
    });
  }
  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& input, const Tensor& output) override {
    const Tensor send = sendable(input);
    const int n = mpi_count(send.numel(), "all_gather_into_tensor");
    const MPI_Datatype type = mpi_type(input.dtype());
    auto work = std::make_shared<MPIWork>(output, std::vector<Tensor>{send}, 1);
    return issue(1, work, input, ReduceOp::Sum, 0, {}, {},
                 [from = send.impl()->data(), to = output.impl()->data(), n, type, comm = comm_](MPI_Request* r) {
                   check_mpi(MPI_Iallgather(from, n, type, to, n, type, comm, r), "MPI_Iallgather");
                 });
  }
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& input, const Tensor& output, ReduceOp op) override {
    const Tensor send = sendable(input);
    const int n = mpi_count(output.numel(), "reduce_scatter_tensor");
    const MPI_Datatype type = mpi_type(input.dtype());
    auto work = std::make_shared<MPIWork>(output, std::vector<Tensor>{send}, op == ReduceOp::Avg ? size() : 1);
    return issue(2, work, input, op, 0, {}, {},
                 [from = send.impl()->data(), to = output.impl()->data(), n, type, op, comm = comm_](MPI_Request* r) {
                   check_mpi(MPI_Ireduce_scatter_block(from, to, n, type, mpi_op(op), comm, r), "MPI_Ireduce_scatter_block");
                 });
  }
  std::shared_ptr<Work> all_to_all_single(const Tensor& input, const Tensor& output, IntArrayRef output_split_sizes,
                                          IntArrayRef input_split_sizes) override {
    const std::vector<std::int64_t> output_splits = splits_or_equal(output_split_sizes, output.size(0), size(), "output_splits");
    const std::vector<std::int64_t> input_splits = splits_or_equal(input_split_sizes, input.size(0), size(), "input_splits");
    const Tensor send = sendable(input);
    const std::int64_t row = input.size(0) == 0 ? 0 : input.numel() / input.size(0);
    // counts and displacements, in elements: MPI takes ints (checked: split sizes are the caller's)
    std::vector<std::vector<int>> counts(4);  // send counts, send displacements, receive counts, receive displacements
    std::int64_t sent = 0, received = 0;
    auto elements = [&](std::int64_t rows) {
      std::int64_t n = 0;
      STRATA_CHECK(!mul_overflows(rows, row, &n), "all_to_all_single: ", rows, " rows of ", row, " elements overflow int64");
      return n;
    };
    for (int j = 0; j < size(); ++j) {
      const auto k = static_cast<std::size_t>(j);
      counts[0].push_back(mpi_count(elements(input_splits[k]), "all_to_all_single"));
      counts[1].push_back(mpi_count(sent, "all_to_all_single"));
      sent += counts[0].back();
      counts[2].push_back(mpi_count(elements(output_splits[k]), "all_to_all_single"));
      counts[3].push_back(mpi_count(received, "all_to_all_single"));
      received += counts[2].back();
    }
    const MPI_Datatype type = mpi_type(input.dtype());
    auto work = std::make_shared<MPIWork>(output, std::vector<Tensor>{send}, 1, std::move(counts));
    const std::vector<std::vector<int>>& c = work->counts();  // held by the work until MPI completes
    return issue(3, work, input, ReduceOp::Sum, 0, output_splits, input_splits,
                 [from = send.impl()->data(), to = output.impl()->data(), c0 = c[0].data(), c1 = c[1].data(),
                  c2 = c[2].data(), c3 = c[3].data(), type, comm = comm_](MPI_Request* r) {
                   check_mpi(MPI_Ialltoallv(from, c0, c1, type, to, c2, c3, type, comm, r), "MPI_Ialltoallv");
                 });
  }
  std::shared_ptr<Work> broadcast(const Tensor& input, const Tensor& output, int src) override {
    const int n = mpi_count(output.numel(), "broadcast");
    const MPI_Datatype type = mpi_type(input.dtype());
    if (rank() == src) copy_(output, input);
    auto work = std::make_shared<MPIWork>(output, std::vector<Tensor>{}, 1);
    return issue(4, work, input, ReduceOp::Sum, src, {}, {}, [to = output.impl()->data(), n, type, src, comm = comm_](MPI_Request* r) {
      check_mpi(MPI_Ibcast(to, n, type, src, comm, r), "MPI_Ibcast");
    });
  }

  // Note [finalize_mpi completes every collective]
  // A collective completes once every rank has issued it, whether or not anyone waits (as on the
  // thread backend). finalize_mpi first compares, per group, how many collectives each rank issued:
  // if a rank never issued one that another did, every rank throws an error naming that collective
  // and the ranks missing (MPI could only abort, or hang, on it). Otherwise it waits for every
  // collective still pending, so their outputs hold the results (avg divided), before MPI ends.
  void complete_all() {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
    check_mpi(MPI_Allgather(&issued_, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, counts_comm_), "MPI_Allgather");
    const std::int64_t fewest = *std::min_element(counts.begin(), counts.end());
    if (fewest != *std::max_element(counts.begin(), counts.end())) {
      std::int32_t kind = -1, kinds_seen = -1;  // which collective #fewest is, from a rank that issued it
      for (const Pending& p : pending_)
        if (p.number == fewest) kind = p.kind;
      check_mpi(MPI_Allreduce(&kind, &kinds_seen, 1, MPI_INT32_T, MPI_MAX, counts_comm_), "MPI_Allreduce");
      std::vector<int> missing;
      for (std::size_t r = 0; r < counts.size(); ++r)
        if (counts[r] == fewest) missing.push_back(static_cast<int>(r));
      std::string ranks;
      for (std::size_t i = 0; i < missing.size(); ++i) ranks += (i ? ", " : "") + std::to_string(missing[i]);
      STRATA_CHECK(false, "finalize_mpi: ", kinds_seen >= 0 ? detail::kMpiCollectives[kinds_seen] : "a collective",
                   " (collective #", fewest, " on group '", name(), "'): rank", missing.size() > 1 ? "s " : " ", ranks,
                   " never joined it");
    }
    while (checks_->advance(true)) {  // Note [DETAIL checks without blocking]
    }
    for (const Pending& p : pending_)
      if (const std::shared_ptr<MPIWork> work = p.work.lock(); work && !work->failed()) work->wait();
    pending_.clear();
    if (checks_->unseen.empty()) return;
    const std::string error = checks_->unseen.begin()->second;
    checks_->unseen.clear();
    STRATA_CHECK(false, "finalize_mpi: ", error, " (on group '", name(), "', and nobody waited for it)");
  }

  // Note [How MPI collectives make progress]: tests each pending collective once (none blocks).
  void progress() {
    while (checks_->advance(false)) {
    }
    for (const Pending& p : pending_)
      if (const std::shared_ptr<MPIWork> work = p.work.lock()) work->test();
  }

 private:
  struct Pending {  // collective #number, of detail::kMpiCollectives[kind]
    std::int64_t number;
    std::int32_t kind;
    std::weak_ptr<MPIWork> work;
  };
  // Starts the collective (under DETAIL, its exchange: Note [DETAIL checks without blocking]); it is
  // number issued_, and finalize_mpi completes it if nobody waits.
  std::shared_ptr<Work> issue(std::int32_t kind, const std::shared_ptr<MPIWork>& work, const Tensor& input, ReduceOp op,
                              int root, IntArrayRef output_splits, IntArrayRef input_splits, MPIWork::Start call) {
    progress();  // Note [How MPI collectives make progress]
    if (detail_) {
      work->defer(std::move(call), std::make_unique<detail::DescriptorExchange>(check_comm_, size(), kind, input, op, root,
                                                                                output_splits, input_splits),
                  issued_, checks_);
      checks_->works.push_back(work);
    } else {
      work->start(call);
    }
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [](const Pending& p) { return p.work.expired(); }),
                   pending_.end());
    pending_.push_back(Pending{issued_++, kind, work});
    return work;
  }

  MPI_Comm comm_;
  MPI_Comm counts_comm_ = MPI_COMM_NULL;
  MPI_Comm check_comm_ = MPI_COMM_NULL;  // DETAIL's exchanges
  std::shared_ptr<Checks> checks_ = std::make_shared<Checks>();
  bool detail_;
  std::int64_t issued_ = 0;       // collectives started on this group
  std::vector<Pending> pending_;  // those whose Work may still be pending
};

bool initialised_here = false;

}  // namespace

bool mpi_available() { return true; }

void init_mpi(int* argc, char*** argv) {
  int ready = 0;
  check_mpi(MPI_Initialized(&ready), "MPI_Initialized");
  if (!ready) {
    int provided = 0;
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    initialised_here = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  register_collective_ops();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  register_process_group(MPIGroup::make(MPI_COMM_WORLD, rank, size, kWorldGroupName));
}

void mpi_progress() {
  for (const std::weak_ptr<MPIGroup>& g : groups_made())
    if (const std::shared_ptr<MPIGroup> group = g.lock()) group->progress();
}

void finalize_mpi() {
  // Note [finalize_mpi completes every collective], group by group in name order (the same on every
  // rank: each comparison is a collective call on its group).
  std::vector<std::shared_ptr<MPIGroup>> groups;
  for (const std::weak_ptr<MPIGroup>& g : groups_made())
    if (std::shared_ptr<MPIGroup> group = g.lock()) groups.push_back(std::move(group));
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return a->name().size() != b->name().size() ? a->name().size() < b->name().size() : a->name() < b->name();
  });
  for (const std::shared_ptr<MPIGroup>& group : groups) group->complete_all();
  groups_made().clear();
  unregister_process_group(kWorldGroupName);
  int done = 0;
  MPI_Finalized(&done);
  if (initialised_here && !done) MPI_Finalize();
}

}  // namespace strata::distributed

#else  // no MPI in this build

namespace strata::distributed {

bool mpi_available() { return false; }
void init_mpi(int*, char***) { STRATA_CHECK(false, "init_mpi: this build of strata has no MPI backend (configure with -Dmpi=enabled and Open MPI installed)"); }
void finalize_mpi() { STRATA_CHECK(false, "finalize_mpi: this build of strata has no MPI backend"); }
void mpi_progress() { STRATA_CHECK(false, "mpi_progress: this build of strata has no MPI backend"); }

}  // namespace strata::distributed

#endif
