// bench/callgrind/loops.cpp: the loops scripts/count-instructions runs under callgrind. Instruction
// counts do not depend on the machine's load, so they compare two builds where wall-clock timings on
// a shared machine cannot. Usage: loops MODE ITERATIONS, MODE one of add, add-grad, forward, step (the
// seed configuration's 1-element add, recorded add, no-grad forward and training step), step-fake (the
// step on fake parameters and batch under FakeTensorMode, as strata-bench's seed_step_fake_us),
// step-passthrough (the step under a dispatch mode that only calls each op through: the price of the
// Python key's round trip on real kernels), eigen-step (strata-bench's hand-written Eigen
// step of the same shapes, for comparison), or dtensor-add, wrapper-add and add-4x4 (strata-bench's
// dtensor group: a 4x4 add of Replicate DTensors on a fake mesh of 1, of do-nothing wrappers, and of
// plain tensors).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string_view>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "bench/eigen_baselines.h"
#include "bench/passthrough_wrapper.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "modes/fake_tensor.h"
#include "tracer/cli/mlp_experiment.h"

namespace {

using namespace strata;

template <typename T>
void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

void add_loop(bool grad, long n) {
  const Tensor a = tensor<float>({1.5f}), b = tensor<float>({2.5f});
  if (grad) requires_grad_(a);
  for (long i = 0; i < n; ++i) keep(add(a, b));
}

// The dtensor group's 4x4 add: on Replicate DTensors of a fake mesh of 1 ("dtensor"), on do-nothing
// wrappers ("wrapper") or on the plain tensors.
void add_4x4_loop(std::string_view kind, long n) {
  using namespace strata::distributed;
  const FakeWorld world(0, 1);
  const DeviceMesh mesh = init_device_mesh({1});
  Tensor a = randn({4, 4}), b = randn({4, 4});
  if (kind == "dtensor") a = distribute_tensor(a, mesh, {Replicate{}}), b = distribute_tensor(b, mesh, {Replicate{}});
  if (kind == "wrapper") a = bench::PassThroughWrapper::wrap(a), b = bench::PassThroughWrapper::wrap(b);
  keep(add(a, b));  // the sharding cache's miss, outside the count
  for (long i = 0; i < n; ++i) keep(add(a, b));
}

// A dispatch mode that runs every op as if it were not there.
class PassThrough final : public DispatchMode {
 public:
  std::string_view name() const override { return "PassThrough"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override { op.call(stack); }
};

void seed_loop(bool train, bool fake, long n, DispatchMode* outer = nullptr) {
  const tracer::MlpConfig config{0, {16, 32, 4}, 8, 0.1};
  manual_seed(config.seed);
  auto [x, y] = tracer::make_batch(config);
  tracer::FakeTensorMode fake_mode;
  std::shared_ptr<nn::Sequential> model;
  {
    std::optional<ModeGuard> mode;
    if (fake) mode.emplace(fake_mode), x = fake_mode.from_tensor(x), y = fake_mode.from_tensor(y);
    model = nn::make_mlp(config.sizes);
  }
  optim::SGD opt(model->parameters(), {.lr = config.lr});
  for (long i = 0; i < n; ++i) {
    std::optional<ModeGuard> mode;
    if (fake) mode.emplace(fake_mode);
    else if (outer) mode.emplace(*outer);
    if (!train) {
      autograd::NoGradGuard no_grad;
      keep((*model)(x));
      continue;
    }
    opt.zero_grad();
    const Tensor loss = nn::functional::cross_entropy((*model)(x), y);
    backward(loss);
    opt.step();
  }
}

void eigen_step_loop(long n) {
  bench::EigenMlp mlp({16, 32, 4}, 1);
  const bench::RowMatrix x = bench::RowMatrix::Random(8, 16);
  const std::vector<std::int64_t> y{0, 1, 2, 3, 0, 1, 2, 3};
  for (long i = 0; i < n; ++i) keep(mlp.train_step(x, y, 0.1f));
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc == 3 ? std::strtol(argv[2], nullptr, 10) : -1;
  const char* mode = argc == 3 ? argv[1] : "";
  if (n < 0) {
    std::cerr << "usage: loops add|add-grad|forward|step|step-fake|step-passthrough|eigen-step|dtensor-add|wrapper-add|add-4x4 ITERATIONS\n";
    return 2;
  }
  if (!std::strcmp(mode, "add")) add_loop(false, n);
  else if (!std::strcmp(mode, "add-grad")) add_loop(true, n);
  else if (!std::strcmp(mode, "forward")) seed_loop(false, false, n);
  else if (!std::strcmp(mode, "step")) seed_loop(true, false, n);
  else if (!std::strcmp(mode, "step-fake")) seed_loop(true, true, n);
  else if (!std::strcmp(mode, "step-passthrough")) {
    PassThrough pass_through;
    seed_loop(true, false, n, &pass_through);
  } else if (!std::strcmp(mode, "eigen-step")) eigen_step_loop(n);
  else if (!std::strcmp(mode, "dtensor-add")) add_4x4_loop("dtensor", n);
  else if (!std::strcmp(mode, "wrapper-add")) add_4x4_loop("wrapper", n);
  else if (!std::strcmp(mode, "add-4x4")) add_4x4_loop("plain", n);
  else {
    std::cerr << "loops: unknown mode '" << mode << "' (add, add-grad, forward, step, step-fake, step-passthrough, eigen-step, dtensor-add, wrapper-add or add-4x4)\n";
    return 2;
  }
}
