// tracer/cli/debug_step.cpp: one SGD step of the MLP inside a DebugMode.
#include "tracer/cli/debug_step.h"

#include "autograd/backward.h"
#include "core/generator.h"
#include "nn/functional.h"
#include "optim/sgd.h"

namespace strata::tracer {

std::unique_ptr<DebugMode> debug_step(const MlpConfig& config, const DebugModeOptions& options,
                                      std::optional<TensorHash> hashes,
                                      const std::function<void(nn::Sequential&)>& before, FakeTensorMode* fake) {
  STRATA_CHECK(!(fake && hashes), "debug_step: tensor hashes read data, which fake tensors do not have");
  std::optional<ModeGuard> fake_guard;
  if (fake) fake_guard.emplace(*fake);
  manual_seed(config.seed);
  auto model = nn::make_mlp(config.sizes);
  if (before) before(*model);
  const auto [x, y] = make_batch(config);
  optim::SGD opt(model->parameters(), {.lr = config.lr});
  auto mode = std::make_unique<DebugMode>(options);
  std::optional<DebugMode::HooksGuard> hash_hook;
  if (hashes) hash_hook.emplace(log_tensor_hashes(*hashes));
  DebugMode::Guard guard(*mode);
  const Tensor loss = nn::functional::cross_entropy((*model)(x), y);
  backward(loss);
  opt.step();
  return mode;
}

}  // namespace strata::tracer
