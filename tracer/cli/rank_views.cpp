// tracer/cli/rank_views.cpp: one rank's view of the data-parallel step (Note [One rank's view of the
// data-parallel step]).
#include "tracer/cli/rank_views.h"

#include "autograd/backward.h"
#include "nn/functional.h"
#include "optim/sgd.h"
#include "tracer/trace_recorder.h"

namespace strata::tracer {

namespace {

// Runs the data-parallel step on every rank; on rank `watched`, `watch()` is entered (its guards held
// by what it returns) just before the step and `done()` runs just after it, while they still hold.
template <typename Watch, typename Done>
void watched_step(const MlpConfig& config, int watched, Watch&& watch, Done&& done) {
  STRATA_CHECK(watched >= 0 && watched < config.world_size, "--rank: expected a rank below the world size (",
               config.world_size, "), got ", watched);
  run_data_parallel(config, [&](int rank, nn::Module& ddp, const Tensor& x, const Tensor& y) {
    optim::SGD opt(ddp.parameters(), {.lr = config.lr});
    auto guards = rank == watched ? watch() : decltype(watch()){};
    backward(nn::functional::cross_entropy(ddp(x), y));
    opt.step();
    if (rank == watched) done(guards);
  });
}

}  // namespace

std::unique_ptr<DebugMode> debug_data_parallel_step(const MlpConfig& config, const DebugModeOptions& options,
                                                    std::optional<TensorHash> hashes, int rank) {
  std::unique_ptr<DebugMode> log;
  struct Guards {
    std::unique_ptr<DebugMode> mode;
    std::optional<DebugMode::HooksGuard> hashes;
    std::optional<DebugMode::Guard> entered;
  };
  watched_step(
      config, rank,
      [&] {
        auto g = std::make_unique<Guards>();
        g->mode = std::make_unique<DebugMode>(options);
        if (hashes) g->hashes.emplace(log_tensor_hashes(*hashes));
        g->entered.emplace(*g->mode);
        return g;
      },
      [&](std::unique_ptr<Guards>& g) {
        g->entered.reset();
        g->hashes.reset();
        log = std::move(g->mode);
      });
  return log;
}

std::optional<Trace> trace_data_parallel_step(const MlpConfig& config, int rank) {
  std::optional<Trace> trace;
  const std::string what = "the seed MLP's data-parallel step on rank " + std::to_string(rank) + " of " +
                           std::to_string(config.world_size);
  watched_step(
      config, rank, [&] { return std::make_unique<TraceRecording>(what); },
      [&](std::unique_ptr<TraceRecording>& recording) { trace = recording->finish(); });
  return trace;
}

}  // namespace strata::tracer
