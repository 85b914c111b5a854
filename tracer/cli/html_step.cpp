// tracer/cli/html_step.cpp: the --html view (html_step.h).
#include "tracer/cli/html_step.h"

#include <mutex>
#include <optional>

#include "autograd/backward.h"
#include "distributed/all_gather_object.h"
#include "distributed/thread_backend.h"
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

// Note [The explorer's page under mpirun]
// Under mpirun a process runs its own rank of the step (run_spmd), so it holds one record of the
// page's several. The world gathers them after recording ends: each rank's record as JSON text (bytes
// that are not UTF-8 already U+FFFD, as the page writes them), through all_gather_strings over the
// world group (no traced op: every recorder has finished). Every rank takes part in the gather (the
// group has no gather to one rank), but only rank 0 parses the others' records and builds the page,
// which it alone writes (Note [strata-trace under mpirun]); the other ranks return an empty page to
// a file they discard. On threads every rank's record is already in the process.
using Records = std::vector<nlohmann::ordered_json>;
std::optional<Records> gathered(Records ranks) {
  distributed::ProcessGroup* world = distributed::find_process_group(distributed::kWorldGroupName);
  if (!world || world->size() == 1) return ranks;
  STRATA_CHECK(ranks.size() == static_cast<std::size_t>(world->size()), "--html: ", ranks.size(),
               " ranks recorded in a world of ", world->size());
  const auto mine = static_cast<std::size_t>(world->rank());
  const std::vector<std::string> texts = distributed::all_gather_strings(
      *world, ranks[mine].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  if (mine != 0) return std::nullopt;
  for (std::size_t r = 1; r < ranks.size(); ++r) ranks[r] = nlohmann::ordered_json::parse(texts[r]);
  return ranks;
}

std::string page_of(const std::optional<Records>& records, const std::string& title) {
  return records ? explorer_html(*records, title) : std::string();
}

// Every rank's step, each recorded on its own thread.
std::optional<Records> record_ranks(const MlpConfig& config) {
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
std::optional<Records> record_tensor_parallel_ranks(const MlpConfig& config) {
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
    return page_of(record_tensor_parallel_ranks(config), title_of(config, fake));
  if (config.world_size > 1 && !fake) return page_of(record_ranks(config), title_of(config, fake));
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
