// distributed/mpi_work.h: the MPI backend's Work (process_group.h): one collective's non-blocking MPI
// request, what MPI reads until it completes, avg's division at the end, and under
// STRATA_DISTRIBUTED_DEBUG=DETAIL the start held back until the ranks' descriptions agree (Note
// [DETAIL checks without blocking]). Internal to the MPI backend; needs <mpi.h>.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mpi_agreement.h"
#include "process_group.h"

namespace strata::distributed::detail {

// An MPI call's result, as strata::Error naming the call and MPI's message.
void check_mpi(int code, const char* call);

// Note [DETAIL checks without blocking]
// Under STRATA_DISTRIBUTED_DEBUG=DETAIL a collective's issue starts the exchange of the ranks'
// descriptions (mpi_agreement.h, on a communicator of its own) and returns; the collective itself
// starts only once its exchange, and every earlier collective's, is complete and the descriptions
// agree, at a progress point (its wait, a later issue, mpi_progress): collectives must start in the
// same order on every rank. Ranks that disagree all see the same descriptions, so none starts it,
// and each rank's wait throws the thread backend's error; one nobody waited for fails finalize_mpi.
class MPIWork;
struct Checks {  // a group's collectives whose exchange is not compared yet, in issue order
  std::deque<std::shared_ptr<MPIWork>> works;
  std::map<std::int64_t, std::string> unseen;  // collectives that failed, by number, nobody waited for yet
  bool advance(bool block);                     // compares (and starts) the first; false when none could be
};

// Note [How MPI collectives make progress] (mpi_backend.h): wait() is MPI_Wait, progress MPI_Test.
class MPIWork final : public Work {
 public:
  using Start = std::function<void(MPI_Request*)>;  // the non-blocking MPI call
  // `counts`: what MPI_Ialltoallv reads until it completes (its count and displacement arrays).
  MPIWork(Tensor output, std::vector<Tensor> keep, double divide_by, std::vector<std::vector<int>> counts = {})
      : output_(std::move(output)), keep_(std::move(keep)), divide_by_(divide_by), counts_(std::move(counts)) {}
  ~MPIWork() override;
  const std::vector<std::vector<int>>& counts() const { return counts_; }
  void start(const Start& call) { call(&request_); }
  // DETAIL: `call` is made by `checks` once `check` agrees.
  void defer(Start call, std::unique_ptr<DescriptorExchange> check, std::int64_t number, std::shared_ptr<Checks> checks);
  void wait() override;
  void test();  // no call blocks
  bool failed() const { return error_.has_value(); }
  // Checks::advance's work on the first of its collectives: whether its exchange is complete, and
  // then its comparison and start.
  bool exchanged(bool block) { return check_->complete(block); }
  void resolve();

 private:
  void advance(bool block);

  MPI_Request request_ = MPI_REQUEST_NULL;
  Tensor output_;
  std::vector<Tensor> keep_;
  double divide_by_;
  std::vector<std::vector<int>> counts_;
  // DETAIL (Note [DETAIL checks without blocking]): the call, held until the exchange agrees.
  Start start_;
  std::unique_ptr<DescriptorExchange> check_;
  std::int64_t number_ = 0;
  std::shared_ptr<Checks> checks_;
  bool resolved_ = true;  // started, or failed
  std::optional<std::string> error_;
};

}  // namespace strata::distributed::detail
