// tracer/cli/html_step.cpp: the --html view (html_step.h).
#include "tracer/cli/html_step.h"

#include <mutex>
#include <optional>

#include "autograd/backward.h"
#include "nn/functional.h"
#include "optim/sgd.h"
#include "tracer/cli/tensor_parallel_step.h"
#include "tracer/explorer.h"

namespace strata::tracer {

namespace {

std::string title_of(const MlpConfig& config, bool fake) {
  std::string sizes;
  for (const std::int64_t s : config.sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
  std::string t = "MLP step: sizes [" + sizes + "], batch " + std::to_string(config.batch);
  if (fake) t += ", fake tensors";
  if (config.world_size > 1 && config.tp > 1)
    t += ", " + std::to_string(config.world_size) + " ranks (mesh " + std::to_string(config.world_size / config.tp) +
         " x " + std::to_string(config.tp) + ", tensor-parallel)";
  else if (config.world_size > 1) t += ", " + std::to_string(config.world_size) + " ranks (data-parallel)";
  return t;
}

// Every rank's step, each recorded on its own thread.
std::vector<nlohmann::ordered_json> record_ranks(const MlpConfig& config) {
  std::vector<nlohmann::ordered_json> ranks(static_cast<std::size_t>(config.world_size));
  std::mutex mutex;
  run_data_parallel(config, [&](int rank, nn::Module& ddp, const Tensor& x, const Tensor& y) {
    optim::SGD opt(ddp.parameters(), {.lr = config.lr});
    ExplorerRecorder recorder({.profile = false, .rank = rank});
    const Tensor loss = nn::functional::cross_entropy(ddp(x), y);
    recorder.set_phase("backward");
    backward(loss);
    recorder.set_phase("optimizer");
    opt.step();
    nlohmann::ordered_json record = recorder.finish();
    const std::lock_guard<std::mutex> lock(mutex);
    ranks[static_cast<std::size_t>(rank)] = std::move(record);
  });
  return ranks;
}

// The tensor-parallel step (Note [The tensor-parallel step]) on every rank, each recorded on its
// thread from its forward on.
std::vector<nlohmann::ordered_json> record_tensor_parallel_ranks(const MlpConfig& config) {
  std::vector<nlohmann::ordered_json> ranks(static_cast<std::size_t>(config.world_size));
  std::vector<std::optional<ExplorerRecorder>> recorders(ranks.size());
  run_tensor_parallel(config, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    return PhasedMode{nullptr,
                      [&, r, rank](const std::string& phase) {
                        if (!recorders[r]) recorders[r].emplace(ExplorerOptions{.phase = phase, .profile = false,
                                                                                .rank = rank});
                        else recorders[r]->set_phase(phase);
                      },
                      [&, r] {
                        ranks[r] = recorders[r]->finish();
                        recorders[r].reset();
                      }};
  });
  return ranks;
}

}  // namespace

std::string html_step(const MlpConfig& config, bool fake) {
  if (config.world_size > 1 && config.tp > 1 && !fake)
    return explorer_html(record_tensor_parallel_ranks(config), title_of(config, fake));
  if (config.world_size > 1 && !fake) return explorer_html(record_ranks(config), title_of(config, fake));
  std::optional<FakeTensorMode> fake_mode;
  if (fake) fake_mode.emplace();
  std::optional<ExplorerRecorder> recorder;
  nlohmann::ordered_json record;
  const PhasedMode phases{nullptr,
                          [&](const std::string& phase) {
                            if (!recorder) recorder.emplace(ExplorerOptions{.phase = phase});
                            else recorder->set_phase(phase);
                          },
                          [&] { record = recorder->finish(); }};
  run_step(config, phases, fake_mode ? &*fake_mode : nullptr);
  return explorer_html({record}, title_of(config, fake));
}

}  // namespace strata::tracer
