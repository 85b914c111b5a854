// distributed/mpi_work.cpp: the MPI backend's Work (mpi_work.h).
#ifdef STRATA_HAVE_MPI

#include "distributed/mpi_work.h"

#include "core/util/error.h"

namespace strata::distributed::detail {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  STRATA_CHECK(false, call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

MPIWork::~MPIWork() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);  // MPI must not write freed memory
}

void MPIWork::defer(Start call, std::unique_ptr<DescriptorExchange> check, std::int64_t number, std::shared_ptr<Checks> checks) {
  start_ = std::move(call);
  check_ = std::move(check);
  number_ = number;
  checks_ = std::move(checks);
  resolved_ = false;
}

void MPIWork::wait() {
  while (!resolved_ && checks_->advance(true)) {
  }
  if (error_) {
    checks_->unseen.erase(number_);
    throw Error(*error_);
  }
  advance(true);
}

void MPIWork::test() {
  if (!resolved_) checks_->advance(false);
  if (resolved_ && !error_) advance(false);
}

void MPIWork::resolve() {
  error_ = check_->disagreement(number_);
  check_.reset();
  try {
    if (!error_) start_(&request_);
  } catch (const Error& e) {
    error_ = e.what();
  }
  start_ = nullptr;
  resolved_ = true;
  if (error_) checks_->unseen[number_] = *error_;
}

// MPI_Wait (block) or MPI_Test; once MPI completed the request (and set it to MPI_REQUEST_NULL),
// releases what MPI read and finishes avg (MPI summed; the kernel refused avg of integers).
void MPIWork::advance(bool block) {
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

bool Checks::advance(bool block) {
  if (works.empty() || !works.front()->exchanged(block)) return false;
  const std::shared_ptr<MPIWork> work = std::move(works.front());
  works.pop_front();
  work->resolve();
  return true;
}

}  // namespace strata::distributed::detail

#endif
