// tracer/cli/fake_rank_step.cpp: one fake rank's data-parallel step (Note [One fake rank of a large world]).
#include "tracer/cli/fake_rank_step.h"

#include "autograd/backward.h"
#include "distributed/data_parallel.h"
#include "distributed/fake_process_group.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"

namespace strata::tracer {

TracedStep fake_data_parallel_step(const MlpConfig& config, int rank) {
  const int world = config.world_size;
  STRATA_CHECK(rank >= 0 && rank < world, "--rank: expected a rank below --world-size (", world, "), got ", rank);
  STRATA_CHECK(config.batch % world == 0, "--world-size: the batch (", config.batch,
               ") must be divisible by the world size (", world, ")");
  const distributed::FakeWorld fake_world(rank, world);
  FakeTensorMode fake;
  TracedStep t;
  {
    const ModeGuard fake_guard(fake);
    manual_seed(rank == 0 ? config.seed : config.seed + 1000 + static_cast<std::uint64_t>(rank));
    distributed::DistributedDataParallel ddp(nn::make_mlp(config.sizes));
    std::tie(t.step.x, t.step.y) = make_batch(config);
    const std::int64_t share = config.batch / world;
    const Tensor xs = narrow(t.step.x, 0, rank * share, share), ys = narrow(t.step.y, 0, rank * share, share);
    optim::SGD opt(ddp.parameters(), {.lr = config.lr});
    Tensor out;
    {
      const ModeGuard counting(t.counter);
      out = ddp(xs);
      t.step.loss = nn::functional::cross_entropy(out, ys);
      t.counter.set_phase("backward");
      backward(t.step.loss);
      t.counter.set_phase("optimizer");
      opt.step();
    }
    t.step.logits = detach(out);
    t.step.loss = detach(t.step.loss);
    for (const Tensor& p : ddp.parameters()) {
      t.step.grads.push_back(detach(p.grad()));
      t.step.params_after.push_back(detach(p));
    }
  }
  return t;
}

}  // namespace strata::tracer
