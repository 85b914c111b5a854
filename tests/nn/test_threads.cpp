// tests/nn/test_threads.cpp: models on several threads at once: independent training, each thread
// its own model, gives what the same training gives run serially, bit for bit; one model shared for
// no-grad inference (NoGradGuard or InferenceMode) gives every thread the serial result; a ModTracker
// sees only its own thread's module calls. Suite
// "threads": scripts/tsan runs these under ThreadSanitizer.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "core/inference_mode.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/mod_tracker.h"
#include "ops/functions.h"
#include "optim/sgd.h"

namespace test_threads {  // Note [Test files in unity builds]

using namespace strata;

namespace {

struct Job {
  std::shared_ptr<nn::Sequential> model;
  Tensor x;
  Tensor y;
};

// A model and data made on the calling thread from `seed` (the default generator is shared, so models
// are made before any thread starts).
Job make_job(std::uint64_t seed) {
  manual_seed(seed);
  Job job{nn::make_mlp({6, 16, 16, 3}), Tensor(), Tensor()};
  Generator g;
  g.manual_seed(seed + 100);
  job.x = randn({8, 6}, {}, &g);
  job.y = randint(0, 3, {8}, {}, &g);
  return job;
}

// Training steps as the MLP experiment runs them: forward, cross-entropy, backward, SGD with momentum.
void train(Job& job, int steps) {
  optim::SGD opt(job.model->parameters(), {.lr = 0.1, .momentum = 0.9});
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    backward(nn::functional::cross_entropy((*job.model)(job.x), job.y));
    opt.step();
  }
}

std::vector<std::vector<float>> values(const nn::Module& model) {
  std::vector<std::vector<float>> out;
  for (const Tensor& p : model.parameters()) out.push_back(p.to_vector<float>());
  return out;
}

}  // namespace

TEST_CASE("independent training on several threads equals a serial run bit for bit" * doctest::test_suite("threads")) {
  constexpr int kThreads = 4;
  constexpr int kSteps = 20;
  std::vector<Job> serial, parallel;
  for (int t = 0; t < kThreads; ++t) serial.push_back(make_job(static_cast<std::uint64_t>(t)));
  for (int t = 0; t < kThreads; ++t) parallel.push_back(make_job(static_cast<std::uint64_t>(t)));
  for (Job& job : serial) train(job, kSteps);
  std::vector<std::thread> threads;
  for (Job& job : parallel) threads.emplace_back([&job] { train(job, kSteps); });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(values(*parallel[t].model) == values(*serial[t].model));
    CHECK(values(*parallel[t].model) != values(*make_job(static_cast<std::uint64_t>(t)).model));  // it trained
  }
}

// One model shared by kThreads threads, each running 50 forwards under `Guard` (grad mode is per
// thread): each gets the serial result, records nothing, and no parameter gets a gradient.
template <typename Guard>
void check_shared_inference() {
  constexpr int kThreads = 4;
  const Job job = make_job(7);  // parameters that require grad, as a trained model's do
  std::vector<Tensor> inputs;
  Generator g;
  g.manual_seed(8);
  for (int t = 0; t < kThreads; ++t) inputs.push_back(randn({5, 6}, {}, &g));
  std::vector<std::vector<float>> expected;
  {
    const autograd::NoGradGuard no_grad;
    for (const Tensor& x : inputs) expected.push_back(nn::functional::log_softmax((*job.model)(x), 1).to_vector<float>());
  }
  std::vector<std::vector<float>> got(kThreads);
  std::vector<int> recorded(kThreads, 0);
  std::vector<int> inference(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const Guard guard;
      for (int i = 0; i < 50; ++i) {
        const Tensor out = nn::functional::log_softmax((*job.model)(inputs[t]), 1);
        recorded[t] += out.requires_grad() ? 1 : 0;
        inference[t] += out.is_inference() ? 1 : 0;
        if (i == 0) got[t] = out.to_vector<float>();
        else if (out.to_vector<float>() != got[t]) got[t].clear();
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(recorded[t] == 0);
    CHECK(inference[t] == (std::is_same_v<Guard, InferenceMode> ? 50 : 0));
    CHECK(got[t] == expected[t]);
  }
  for (const Tensor& p : job.model->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("one model shared by several threads for no-grad inference gives each the serial result" *
          doctest::test_suite("threads")) {
  check_shared_inference<autograd::NoGradGuard>();
}

TEST_CASE("one model shared by several threads under InferenceMode gives each the serial result" *
          doctest::test_suite("threads")) {
  check_shared_inference<InferenceMode>();
}

TEST_CASE("a ModTracker sees only its own thread's module calls (Note [A tracker sees its own thread's modules])" *
          doctest::test_suite("threads")) {
  nn::ModTracker tracker;
  std::vector<std::string> seen;
  tracker.register_user_hooks([&](nn::Module& m, const Tensor&) { seen.push_back(tracker.fqn(m)); }, nullptr);
  tracker.enter();
  auto mine = std::make_shared<nn::Linear>(6, 2), theirs = std::make_shared<nn::Linear>(6, 2);
  std::thread other([&] {
    for (int i = 0; i < 20; ++i) (void)(*theirs)(randn({3, 6}));
  });
  for (int i = 0; i < 20; ++i) (void)(*mine)(randn({3, 6}));
  other.join();
  CHECK(seen == std::vector<std::string>(20, "Linear"));
  CHECK(tracker.parents() == std::set<std::string>{"Global"});
  tracker.exit();
}

}  // namespace test_threads
