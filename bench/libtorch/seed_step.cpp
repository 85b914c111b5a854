// bench/libtorch/seed_step.cpp: the MLP step (16-32-4 MLP, batch 8, cross_entropy, SGD), its no-grad
// forward and a 1-element add, plain and recorded, in LibTorch, timed as strata-bench times them
// (median of repeated batches, one thread). Built and run only by scripts/compare-libtorch, against
// Debian's LibTorch (1.13, package libtorch-dev); strata's build and tests never need it.
#include <torch/torch.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
template <class F> double median_ns(F f, int reps, int inner) {
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) f();
    v.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / inner);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main() {
  at::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 4));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  auto x = torch::randn({8, 16});
  auto y = torch::randint(0, 4, {8}, torch::kLong);
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 200; ++i) step();
  auto a = torch::ones({1}), b = torch::ones({1});
  auto g = torch::ones({1}, torch::requires_grad());
  const double s = median_ns(step, 31, 200);
  const double add = median_ns([&] { auto c = a + b; }, 31, 20000);
  const double gadd = median_ns([&] { auto c = g + b; }, 31, 20000);
  torch::NoGradGuard ng;
  const double fwd = median_ns([&] { auto o = model->forward(x); }, 31, 2000);
  std::printf("{\"libtorch_seed_step_us\": %.2f, \"libtorch_seed_forward_us\": %.2f, \"libtorch_add_1elem_ns\": %.0f, \"libtorch_add_1elem_grad_ns\": %.0f}\n", s / 1000, fwd / 1000, add, gadd);
}
