// tests/install/app/ddp_check.h: the DistributedDataParallel check app.cpp (thread ranks) and
// mpi_app.cpp (MPI ranks) share: each rank starts from its own parameters and runs one backward on
// its share of a batch; DDP must have given every rank rank 0's parameters and the full batch's
// gradients (the mean of the shares' mean losses is the batch's mean loss).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

// Only the parts it uses, not <strata/strata.h>: mpi_app.cpp then compiles in half the time.
#include <strata/autograd/backward.h>
#include <strata/distributed/data_parallel.h>
#include <strata/nn/functional.h>
#include <strata/nn/layers.h>
#include <strata/ops/functions.h>

namespace app {

struct DdpCase {
  std::shared_ptr<strata::nn::Sequential> reference;  // rank 0's model, with the full batch's gradients
  strata::Tensor x, y;                                // the batch: 4 rows, split between the ranks
};

inline DdpCase make_ddp_case() {
  using namespace strata;
  DdpCase c;
  manual_seed(1);
  c.reference = nn::make_mlp({3, 5, 2});
  c.x = randn({4, 3});
  c.y = tensor<std::int64_t>({0, 1, 1, 0});
  backward(nn::functional::cross_entropy((*c.reference)(c.x), c.y));
  return c;
}

// The model a rank starts from: rank 0's is the reference's initial one, the others differ. Made
// on one thread (the default generator is shared).
inline std::shared_ptr<strata::nn::Module> rank_model(const DdpCase&, int rank) {
  strata::manual_seed(rank == 0 ? 1 : 100 + static_cast<std::uint64_t>(rank));
  return strata::nn::make_mlp({3, 5, 2});
}

// "same parameters and gradients as one process", or what differs.
inline std::string check_ddp(const DdpCase& c, std::shared_ptr<strata::nn::Module> model, int rank, int world) {
  using namespace strata;
  distributed::DistributedDataParallel ddp(std::move(model));
  const std::int64_t share = c.x.size(0) / world;
  backward(nn::functional::cross_entropy(ddp(narrow(c.x, 0, rank * share, share)), narrow(c.y, 0, rank * share, share)));
  const auto mine = ddp.parameters(), want = c.reference->parameters();
  auto close = [](const Tensor& p, const Tensor& q) {
    const Tensor d = sub(p, q);
    return max(mul(d, d)).item<double>() < 1e-12;
  };
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (!close(mine[i], want[i])) return "parameter " + std::to_string(i) + " differs from rank 0's";
    if (!close(mine[i].grad(), want[i].grad())) return "gradient " + std::to_string(i) + " differs from the full batch's";
  }
  return "same parameters and gradients as one process";
}

}  // namespace app
