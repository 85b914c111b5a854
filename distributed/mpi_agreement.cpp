// distributed/mpi_agreement.cpp: the DETAIL check's exchange and comparison (mpi_agreement.h). The
// messages are the thread backend's (check_agreement in thread_round.cpp), so a disagreement reads
// the same on both backends.
#ifdef STRATA_HAVE_MPI

#include "distributed/mpi_agreement.h"

#include <algorithm>
#include <sstream>

#include "core/util/error.h"
#include "distributed/mpi_work.h"

namespace strata::distributed::detail {

namespace {

template <typename... Args>
std::string message(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace

DescriptorExchange::DescriptorExchange(MPI_Comm comm, int size, int collective, const Tensor& input, ReduceOp op, int root,
                                       IntArrayRef output_splits, IntArrayRef input_splits)
    : all_(static_cast<std::size_t>(size)) {
  mine_.collective = collective;
  mine_.dtype = static_cast<std::int32_t>(input.dtype());
  mine_.op = static_cast<std::int32_t>(op);
  mine_.root = root;
  mine_.dims = static_cast<std::int32_t>(std::min<std::size_t>(input.sizes().size(), 8));
  for (int d = 0; d < mine_.dims; ++d) mine_.sizes[d] = input.sizes()[static_cast<std::size_t>(d)];
  check_mpi(MPI_Iallgather(&mine_, sizeof(Descriptor), MPI_BYTE, all_.data(), sizeof(Descriptor), MPI_BYTE, comm,
                                &requests_[0]),
                 "MPI_Iallgather");
  if (collective != 3) return;
  // all_to_all_single: each rank's splits, [output..., input...], side by side.
  const auto n = static_cast<std::size_t>(size);
  splits_.assign(output_splits.begin(), output_splits.end());
  splits_.insert(splits_.end(), input_splits.begin(), input_splits.end());
  everyone_.resize(2 * n * n);
  check_mpi(MPI_Iallgather(splits_.data(), static_cast<int>(2 * n), MPI_INT64_T, everyone_.data(),
                                static_cast<int>(2 * n), MPI_INT64_T, comm, &requests_[1]),
                 "MPI_Iallgather");
}

DescriptorExchange::~DescriptorExchange() {
  if (!done_) MPI_Waitall(2, requests_, MPI_STATUSES_IGNORE);
}

bool DescriptorExchange::complete(bool block) {
  if (done_) return true;
  int flag = 1;
  if (block) check_mpi(MPI_Waitall(2, requests_, MPI_STATUSES_IGNORE), "MPI_Waitall");
  else check_mpi(MPI_Testall(2, requests_, &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
  done_ = flag != 0;
  return done_;
}

std::optional<std::string> DescriptorExchange::disagreement(std::int64_t number) const {
  const Descriptor& first = all_[0];
  const char* name = kMpiCollectives[first.collective];
  const bool rows_only = first.collective == 3;  // all_to_all_single: rows of one size, not one count
  for (std::size_t r = 1; r < all_.size(); ++r) {
    const Descriptor& d = all_[r];
    if (d.collective != first.collective)
      return message("collective #", number, ": rank 0 called ", name, " but rank ", r, " called ",
                     kMpiCollectives[d.collective], " (every rank must call the same collectives in the same order)");
    if (d.dtype != first.dtype)
      return message(name, " (collective #", number, "): rank 0's tensor is ", static_cast<ScalarType>(first.dtype),
                     " but rank ", r, "'s is ", static_cast<ScalarType>(d.dtype));
    const int from = rows_only ? 1 : 0;
    if (d.dims != first.dims || !std::equal(d.sizes + from, d.sizes + d.dims, first.sizes + from))
      return message(name, " (collective #", number, "): rank 0's tensor has sizes ",
                     shape_str(IntArrayRef(first.sizes, static_cast<std::size_t>(first.dims))), " but rank ", r, "'s has ",
                     shape_str(IntArrayRef(d.sizes, static_cast<std::size_t>(d.dims))),
                     rows_only ? " (all but the first must match)" : "");
    if (d.op != first.op)
      return message(name, " (collective #", number, "): rank 0 reduces with ", reduce_op_name(static_cast<ReduceOp>(first.op)),
                     " but rank ", r, " with ", reduce_op_name(static_cast<ReduceOp>(d.op)));
    if (d.root != first.root)
      return message("broadcast (collective #", number, "): rank 0 broadcasts from rank ", first.root, " but rank ", r,
                     " from rank ", d.root);
  }
  if (!rows_only) return std::nullopt;
  const std::size_t n = all_.size();  // rank j sends input_splits[r] rows to r
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t sent = everyone_[j * 2 * n + n + r], received = everyone_[r * 2 * n + j];
      if (sent != received)
        return message("all_to_all_single (collective #", number, "): rank ", j, " sends ", sent, " rows to rank ", r,
                       ", which expects ", received);
    }
  return std::nullopt;
}

}  // namespace strata::distributed::detail

#endif
