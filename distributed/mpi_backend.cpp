// distributed/mpi_backend.cpp: process groups over MPI_COMM_WORLD (Note [Starting MPI]). Each
// collective keeps what MPI reads, starts the non-blocking call, and leaves an MPIWork that completes
// it (MPI_Wait, or MPI_Test when progress is made) and finishes avg by dividing.
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
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

namespace strata::distributed {

namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  STRATA_CHECK(false, call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

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

// Note [How MPI collectives make progress] (mpi_backend.h): wait() is MPI_Wait, progress MPI_Test.
class MPIWork final : public Work {
 public:
  // `counts`: what MPI_Ialltoallv reads until it completes (its count and displacement arrays).
  MPIWork(MPI_Request request, Tensor output, std::vector<Tensor> keep, double divide_by,
          std::vector<std::vector<int>> counts = {})
      : request_(request), output_(std::move(output)), keep_(std::move(keep)), divide_by_(divide_by),
        counts_(std::move(counts)) {}
  ~MPIWork() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);  // MPI must not write freed memory
  }
  void wait() override { advance(true); }
  void test() { advance(false); }  // one MPI_Test, which may complete it

 private:
  // MPI_Wait (block) or MPI_Test; once MPI completed the request (and set it to MPI_REQUEST_NULL),
  // releases what MPI read and finishes avg (MPI summed; the kernel refused avg of integers).
  void advance(bool block) {
    if (request_ == MPI_REQUEST_NULL) return;
    int complete = 1;
    if (block) check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    else check_mpi(MPI_Test(&request_, &complete, MPI_STATUS_IGNORE), "MPI_Test");
    if (!complete) return;
    keep_.clear();
    counts_.clear();
    if (divide_by_ == 1) return;
    const std::size_t n = static_cast<std::size_t>(output_.numel());
    if (output_.dtype() == ScalarType::Float32) {
      float* o = static_cast<float*>(output_.impl()->data());
      for (std::size_t i = 0; i < n; ++i) o[i] = o[i] / static_cast<float>(divide_by_);
    } else {
      double* o = static_cast<double*>(output_.impl()->data());
      for (std::size_t i = 0; i < n; ++i) o[i] = o[i] / divide_by_;
    }
  }

  MPI_Request request_;
  Tensor output_;
  std::vector<Tensor> keep_;
  double divide_by_;
  std::vector<std::vector<int>> counts_;
};

// Note [Starting MPI]: the DETAIL check. What a rank is about to call, compared across ranks.
struct Descriptor {
  std::int32_t collective, dtype, op, root, dims;
  std::int64_t sizes[8];
};
const char* const kCollectives[] = {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all_single",
                                    "broadcast"};

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
  }
  ~MPIGroup() override {
    int done = 0;
    MPI_Finalized(&done);
    if (done) return;
    MPI_Comm_free(&counts_comm_);
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  static std::shared_ptr<MPIGroup> make(MPI_Comm comm, int rank, int size, std::string name) {
    auto group = std::make_shared<MPIGroup>(comm, rank, size, std::move(name));
    groups_made().push_back(group);
    return group;
  }

  // Note [Splitting a group]: MPI_Comm_split, which every rank of this group joins.
  std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& members, const std::string& name, int index) override {
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

  std::shared_ptr<Work> all_reduce(const Tensor& input, const Tensor& output, ReduceOp op) override {
    agree(0, input, op, 0);
    const Tensor send = sendable(input);
    // all_reduce_ passes one tensor as both: MPI spells that MPI_IN_PLACE.
    const void* from = send.impl()->data() == output.impl()->data() ? MPI_IN_PLACE : send.impl()->data();
    MPI_Request r;
    check_mpi(MPI_Iallreduce(from, output.impl()->data(), mpi_count(output.numel(), "all_reduce"),
                             mpi_type(input.dtype()), mpi_op(op), comm_, &r),
              "MPI_Iallreduce");
    return issued(0, std::make_shared<MPIWork>(r, output, std::vector<Tensor>{send}, op == ReduceOp::Avg ? size() : 1));
  }
  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& input, const Tensor& output) override {
    agree(1, input, ReduceOp::Sum, 0);
    const Tensor send = sendable(input);
    const int n = mpi_count(send.numel(), "all_gather_into_tensor");
    MPI_Request r;
    check_mpi(MPI_Iallgather(send.impl()->data(), n, mpi_type(input.dtype()), output.impl()->data(), n, mpi_type(input.dtype()),
                             comm_, &r),
              "MPI_Iallgather");
    return issued(1, std::make_shared<MPIWork>(r, output, std::vector<Tensor>{send}, 1));
  }
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor& input, const Tensor& output, ReduceOp op) override {
    agree(2, input, op, 0);
    const Tensor send = sendable(input);
    MPI_Request r;
    check_mpi(MPI_Ireduce_scatter_block(send.impl()->data(), output.impl()->data(), mpi_count(output.numel(), "reduce_scatter_tensor"),
                                        mpi_type(input.dtype()), mpi_op(op), comm_, &r),
              "MPI_Ireduce_scatter_block");
    return issued(2, std::make_shared<MPIWork>(r, output, std::vector<Tensor>{send}, op == ReduceOp::Avg ? size() : 1));
  }
  std::shared_ptr<Work> all_to_all_single(const Tensor& input, const Tensor& output, IntArrayRef output_splits,
                                          IntArrayRef input_splits) override {
    agree(3, input, ReduceOp::Sum, 0, output_splits, input_splits);
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
    MPI_Request r;
    check_mpi(MPI_Ialltoallv(send.impl()->data(), counts[0].data(), counts[1].data(), mpi_type(input.dtype()),
                             output.impl()->data(), counts[2].data(), counts[3].data(), mpi_type(input.dtype()), comm_, &r),
              "MPI_Ialltoallv");
    return issued(3, std::make_shared<MPIWork>(r, output, std::vector<Tensor>{send}, 1, std::move(counts)));
  }
  std::shared_ptr<Work> broadcast(const Tensor& input, const Tensor& output, int src) override {
    agree(4, input, ReduceOp::Sum, src);
    if (rank() == src) copy_(output, input);
    MPI_Request r;
    check_mpi(MPI_Ibcast(output.impl()->data(), mpi_count(output.numel(), "broadcast"), mpi_type(input.dtype()), src,
                         comm_, &r),
              "MPI_Ibcast");
    return issued(4, std::make_shared<MPIWork>(r, output, std::vector<Tensor>{}, 1));
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
      STRATA_CHECK(false, "finalize_mpi: ", kinds_seen >= 0 ? kCollectives[kinds_seen] : "a collective", " (collective #", fewest,
                   " on group '", name(), "'): rank", missing.size() > 1 ? "s " : " ", ranks, " never joined it");
    }
    for (const Pending& p : pending_)
      if (const std::shared_ptr<MPIWork> work = p.work.lock()) work->wait();
    pending_.clear();
  }

  // Note [How MPI collectives make progress]: tests each pending collective once (none blocks).
  void progress() {
    for (const Pending& p : pending_)
      if (const std::shared_ptr<MPIWork> work = p.work.lock()) work->test();
  }

 private:
  struct Pending {  // collective #number, of kCollectives[kind]
    std::int64_t number;
    std::int32_t kind;
    std::weak_ptr<MPIWork> work;
  };
  // The collective was started: it is number issued_, and finalize_mpi completes it if nobody waits.
  std::shared_ptr<Work> issued(std::int32_t kind, std::shared_ptr<MPIWork> work) {
    progress();  // Note [How MPI collectives make progress]
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [](const Pending& p) { return p.work.expired(); }),
                   pending_.end());
    pending_.push_back(Pending{issued_++, kind, work});
    return work;
  }

  // STRATA_DISTRIBUTED_DEBUG=DETAIL: every rank's description of this collective, compared
  // (all_to_all_single's splits too: what each rank sends another must be what that one expects).
  void agree(int collective, const Tensor& input, ReduceOp op, int root, IntArrayRef output_splits = {},
             IntArrayRef input_splits = {}) {
    if (!detail_) return;
    const std::int64_t number = issued_;
    Descriptor mine{};
    mine.collective = collective;
    mine.dtype = static_cast<std::int32_t>(input.dtype());
    mine.op = static_cast<std::int32_t>(op);
    mine.root = root;
    mine.dims = static_cast<std::int32_t>(std::min<std::size_t>(input.sizes().size(), 8));
    for (int d = 0; d < mine.dims; ++d) mine.sizes[d] = input.sizes()[static_cast<std::size_t>(d)];
    std::vector<Descriptor> all(static_cast<std::size_t>(size()));
    check_mpi(MPI_Allgather(&mine, sizeof(Descriptor), MPI_BYTE, all.data(), sizeof(Descriptor), MPI_BYTE, comm_),
              "MPI_Allgather");
    const Descriptor& first = all[0];
    const char* name = kCollectives[first.collective];
    const bool rows_only = first.collective == 3;  // all_to_all_single: rows of one size, not one count
    for (std::size_t r = 1; r < all.size(); ++r) {
      const Descriptor& d = all[r];
      STRATA_CHECK(d.collective == first.collective, "collective #", number, ": rank 0 called ", name, " but rank ", r,
                   " called ", kCollectives[d.collective], " (every rank must call the same collectives in the same order)");
      STRATA_CHECK(d.dtype == first.dtype, name, " (collective #", number, "): rank 0's tensor is ",
                   static_cast<ScalarType>(first.dtype), " but rank ", r, "'s is ", static_cast<ScalarType>(d.dtype));
      const int from = rows_only ? 1 : 0;
      STRATA_CHECK(d.dims == first.dims && std::equal(d.sizes + from, d.sizes + d.dims, first.sizes + from), name,
                   " (collective #", number, "): rank 0's tensor has sizes ",
                   shape_str(IntArrayRef(first.sizes, static_cast<std::size_t>(first.dims))), " but rank ", r, "'s has ",
                   shape_str(IntArrayRef(d.sizes, static_cast<std::size_t>(d.dims))),
                   rows_only ? " (all but the first must match)" : "");
      STRATA_CHECK(d.op == first.op, name, " (collective #", number, "): rank 0 reduces with ",
                   reduce_op_name(static_cast<ReduceOp>(first.op)), " but rank ", r, " with ",
                   reduce_op_name(static_cast<ReduceOp>(d.op)));
      STRATA_CHECK(d.root == first.root, "broadcast (collective #", number, "): rank 0 broadcasts from rank ", first.root,
                   " but rank ", r, " from rank ", d.root);
    }
    if (!rows_only) return;
    // Each rank's splits, [output..., input...], side by side: rank j sends input_splits[r] rows to r.
    const auto n = static_cast<std::size_t>(size());
    std::vector<std::int64_t> splits(output_splits.begin(), output_splits.end()), everyone(2 * n * n);
    splits.insert(splits.end(), input_splits.begin(), input_splits.end());
    check_mpi(MPI_Allgather(splits.data(), static_cast<int>(2 * n), MPI_INT64_T, everyone.data(), static_cast<int>(2 * n),
                            MPI_INT64_T, comm_),
              "MPI_Allgather");
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t j = 0; j < n; ++j) {
        const std::int64_t sent = everyone[j * 2 * n + n + r], received = everyone[r * 2 * n + j];
        STRATA_CHECK(sent == received, "all_to_all_single (collective #", number, "): rank ", j, " sends ", sent,
                     " rows to rank ", r, ", which expects ", received);
      }
  }

  MPI_Comm comm_;
  MPI_Comm counts_comm_ = MPI_COMM_NULL;
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
