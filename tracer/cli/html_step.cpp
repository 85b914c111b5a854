// tracer/cli/html_step.cpp: the --html view (html_step.h).
#include "tracer/cli/html_step.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>

#include "autograd/backward.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "nn/functional.h"
#include "ops/functions.h"
#include "ops/tensor_literal.h"
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

// Note [The explorer's page under mpirun]
// Under mpirun a process runs its own rank of the step (run_spmd), so it holds one record of the
// page's several. The world gathers them after recording ends: each rank's record as JSON text (bytes
// that are not UTF-8 already U+FFFD, as the page writes them), its length first, then its bytes padded
// to the longest as int64 words, over the world group's own all-gather (no traced op: every recorder
// has finished). Every rank gathers (the group has no gather to one rank) and rank 0 alone writes the
// page (Note [strata-trace under mpirun]). On threads every rank's record is already in the process.
std::vector<nlohmann::ordered_json> gathered(std::vector<nlohmann::ordered_json> ranks) {
  distributed::ProcessGroup* world = distributed::find_process_group(distributed::kWorldGroupName);
  if (!world || world->size() == 1) return ranks;
  STRATA_CHECK(ranks.size() == static_cast<std::size_t>(world->size()), "--html: ", ranks.size(),
               " ranks recorded in a world of ", world->size());
  const auto mine = static_cast<std::size_t>(world->rank());
  const std::string text = ranks[mine].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  const TensorOptions words{ScalarType::Int64, {}};
  const Tensor lengths = empty({world->size()}, words);
  world->all_gather_into_tensor(tensor({static_cast<std::int64_t>(text.size())}), lengths)->wait();
  const std::vector<std::int64_t> length = lengths.to_vector<std::int64_t>();
  const std::int64_t longest = *std::max_element(length.begin(), length.end());
  const std::int64_t per_rank = (longest + 7) / 8;
  const Tensor bytes = zeros({per_rank}, words), all = empty({per_rank * world->size()}, words);
  std::memcpy(bytes.data_ptr<std::int64_t>(), text.data(), text.size());
  world->all_gather_into_tensor(bytes, all)->wait();
  const auto* base = reinterpret_cast<const char*>(all.data_ptr<std::int64_t>());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (r != mine)
      ranks[r] = nlohmann::ordered_json::parse(std::string_view(base + r * static_cast<std::size_t>(per_rank) * 8,
                                                                static_cast<std::size_t>(length[r])));
  return ranks;
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
  return gathered(std::move(ranks));
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
  return gathered(std::move(ranks));
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
