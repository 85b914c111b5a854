// tracer/cli/tensor_parallel_step.cpp: the MLP step on a (dp, tp) mesh (Note [The tensor-parallel step]).
#include "tracer/cli/tensor_parallel_step.h"

#include <optional>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "distributed/device_mesh.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/functional_collectives.h"
#include "distributed/tensor_parallel.h"
#include "distributed/thread_backend.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"

namespace strata::tracer {

namespace {

std::int64_t data_parallel_size(const MlpConfig& c) { return c.world_size / c.tp; }

distributed::DeviceMesh make_mesh(const MlpConfig& c) {
  return distributed::init_device_mesh({data_parallel_size(c), c.tp}, {"dp", "tp"});
}

// One rank's step on `model` (parallelized here), under `phases` (a counter, or the explorer's
// recorder); its logits (this dp row's).
Tensor rank_step(const MlpConfig& c, nn::Module& model, const distributed::DeviceMesh& mesh, const Tensor& x,
                 const Tensor& y, const PhasedMode& phases, Tensor& loss) {
  distributed::parallelize_module(model, mesh.slice("tp"), distributed::alternating_linear_plan(model));
  const std::int64_t share = c.batch / data_parallel_size(c), row = (*mesh.get_coordinate())[0];
  const Tensor xs = narrow(x, 0, row * share, share), ys = narrow(y, 0, row * share, share);
  optim::SGD opt(model.parameters(), {.lr = c.lr});
  Tensor out;
  {
    std::optional<ModeGuard> mode;
    if (phases.mode) mode.emplace(*phases.mode);
    phases.phase("forward");
    out = model(xs);
    loss = nn::functional::cross_entropy(out, ys);
    phases.phase("backward");
    backward(loss);
    if (data_parallel_size(c) > 1) distributed::average_gradients(model, mesh, 0);
    phases.phase("optimizer");
    opt.step();
    phases.end();
  }
  return detach(out);
}

// Made on this thread (the default generator is shared by the ranks' threads); every rank shards
// the same model, the single-process one.
std::vector<std::shared_ptr<nn::Sequential>> rank_models(const MlpConfig& c) {
  std::vector<std::shared_ptr<nn::Sequential>> models;
  for (int r = 0; r < c.world_size; ++r) {
    manual_seed(c.seed);
    models.push_back(nn::make_mlp(c.sizes));
  }
  return models;
}

}  // namespace

void check_tensor_parallel(const MlpConfig& c) {
  STRATA_CHECK(c.tp >= 1 && c.world_size % c.tp == 0, "--tp: the tensor-parallel size (", c.tp,
               ") must divide --world-size (", c.world_size, ")");
  const std::int64_t dp = data_parallel_size(c);
  STRATA_CHECK(c.batch % dp == 0, "--tp: the batch (", c.batch, ") must be divisible by the data-parallel size (",
               c.world_size, " / ", c.tp, " = ", dp, ")");
  const std::size_t layers = c.sizes.size() - 1;
  for (std::size_t i = 0; i < layers; i += 2) {  // the Colwise layers' output features
    const std::int64_t width = c.sizes[i + 1];
    STRATA_CHECK(width % c.tp == 0, "--tp: the tensor-parallel size (", c.tp, ") must divide the width ", width,
                 " (--sizes entry ", i + 1, ", the output features of layer ", i, ", which ColwiseParallel shards",
                 i + 1 == layers ? "; with an odd number of layers the last is Colwise" : "", ")");
  }
}

TracedStep tensor_parallel_step(const MlpConfig& c) {
  check_tensor_parallel(c);
  TracedStep t;
  std::tie(t.step.x, t.step.y) = make_batch(c);
  const std::vector<std::shared_ptr<nn::Sequential>> models = rank_models(c);
  distributed::run_spmd(c.world_size, [&](int rank) {
    const distributed::DeviceMesh mesh = make_mesh(c);
    OpCounter counter;
    Tensor loss;
    const Tensor out = rank_step(c, *models[static_cast<std::size_t>(rank)], mesh, t.step.x, t.step.y,
                                 PhasedMode::of(counter), loss);
    const std::int64_t dp = data_parallel_size(c);
    // Every dp row's logits in order (a collective: every rank takes part), and the parameters whole.
    const Tensor logits =
        dp > 1 ? distributed::wait_tensor(distributed::all_gather_into_tensor(out, dp, mesh.group_name(0))) : out;
    std::vector<Tensor> params;
    {
      const autograd::NoGradGuard no_grad;
      for (const Tensor& p : models[static_cast<std::size_t>(rank)]->parameters())
        params.push_back(distributed::is_dtensor(p) ? distributed::full_tensor(detach(p)) : clone(detach(p)));
    }
    if (rank != 0) return;
    t.counter = counter;
    t.step.logits = logits;
    t.step.loss = detach(loss);
    t.step.params_after = params;
  });
  return t;
}

void run_tensor_parallel(const MlpConfig& c, const std::function<PhasedMode(int rank)>& phases_of) {
  check_tensor_parallel(c);
  const std::pair<Tensor, Tensor> batch = make_batch(c);  // not a structured binding: clang 14 can't capture one
  const std::vector<std::shared_ptr<nn::Sequential>> models = rank_models(c);
  distributed::run_spmd(c.world_size, [&](int rank) {
    Tensor loss;
    rank_step(c, *models[static_cast<std::size_t>(rank)], make_mesh(c), batch.first, batch.second, phases_of(rank),
              loss);
  });
}

TracedStep fake_tensor_parallel_step(const MlpConfig& c, int rank) {
  check_tensor_parallel(c);
  STRATA_CHECK(rank >= 0 && rank < c.world_size, "--rank: expected a rank below --world-size (", c.world_size,
               "), got ", rank);
  const distributed::FakeWorld fake_world(rank, c.world_size);
  FakeTensorMode fake;
  const ModeGuard fake_guard(fake);
  TracedStep t;
  manual_seed(c.seed);
  const std::shared_ptr<nn::Sequential> model = nn::make_mlp(c.sizes);
  std::tie(t.step.x, t.step.y) = make_batch(c);
  t.step.logits = rank_step(c, *model, make_mesh(c), t.step.x, t.step.y, PhasedMode::of(t.counter), t.step.loss);
  t.step.loss = detach(t.step.loss);
  for (const Tensor& p : model->parameters()) t.step.params_after.push_back(detach(p));
  return t;
}

}  // namespace strata::tracer
