// distributed/mpi_agreement.h: the MPI backend's STRATA_DISTRIBUTED_DEBUG=DETAIL check (Note
// [Starting MPI]): each rank's description of a collective (which one, dtype, sizes, reduce op, root,
// all_to_all_single's splits), exchanged with non-blocking calls when the collective is issued and
// compared once the exchange is complete (Note [DETAIL checks without blocking], mpi_backend.cpp).
// Internal to the MPI backend; needs <mpi.h>.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../core/util/array_ref.h"
#include "../core/tensor.h"
#include "reduce_op.h"

namespace strata::distributed::detail {

// The collectives, by the index a description carries.
inline const char* const kMpiCollectives[] = {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
                                              "all_to_all_single", "broadcast"};

// One collective's exchange of descriptions on `comm` (a communicator of the group's own, so that
// the exchanges never match the collectives themselves), started by the constructor.
class DescriptorExchange {
 public:
  DescriptorExchange(MPI_Comm comm, int size, int collective, const Tensor& input, ReduceOp op, int root,
                     IntArrayRef output_splits, IntArrayRef input_splits);
  ~DescriptorExchange();  // waits for what is pending: MPI must not write freed memory
  DescriptorExchange(const DescriptorExchange&) = delete;
  DescriptorExchange& operator=(const DescriptorExchange&) = delete;
  // Whether every rank's description has arrived: MPI_Waitall when `block`, else MPI_Testall.
  bool complete(bool block);
  // Once complete: the error every rank gets for collective #number when the ranks disagree.
  std::optional<std::string> disagreement(std::int64_t number) const;

 private:
  struct Descriptor {
    std::int32_t collective, dtype, op, root, dims;
    std::int64_t sizes[8];
  };
  Descriptor mine_{};
  std::vector<Descriptor> all_;
  std::vector<std::int64_t> splits_, everyone_;  // all_to_all_single: [output..., input...] per rank
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  bool done_ = false;
};

}  // namespace strata::distributed::detail
