// tests/autograd/test_threads.cpp: backward passes on several threads at once into leaves they share
// (Note [Gradients accumulate under the accumulator's lock]). Suite "threads": scripts/tsan runs these under
// ThreadSanitizer.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "autograd/backward.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "ops/functions.h"

namespace test_threads {  // Note [Test files in unity builds]

using namespace strata;

namespace {

// A tensor of the given sizes whose elements are small non-negative integers, (i * 7 + seed) % 3.
Tensor pattern(std::vector<std::int64_t> sizes, int seed) {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) n *= s;
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(static_cast<float>((i * 7 + seed) % 3));
  return tensor<float>(values, sizes);
}

Tensor leaf(std::vector<std::int64_t> sizes, int seed) {
  Tensor t = pattern(std::move(sizes), seed);
  requires_grad_(t);
  return t;
}

// The four leaves of a two-layer perceptron, as in the MLP step. Every value is a small non-negative
// integer, so every activation is non-negative (relu passes it) and every product and sum a backward
// pass makes, and every sum of those over all passes, is an integer below 2^24: exact in float32,
// whatever order the gradients are added in. Leaves of a few thousand elements keep each in-place
// accumulation long enough for unsynchronised ones to overlap.
struct Shared {
  Tensor w1 = leaf({32, 64}, 1);
  Tensor b1 = leaf({32}, 2);
  Tensor w2 = leaf({8, 32}, 3);
  Tensor b2 = leaf({8}, 4);
  std::vector<Tensor> leaves() const { return {w1, b1, w2, b2}; }
};

// One forward and backward pass on a batch that depends on `seed`.
void pass(const Shared& s, int seed) {
  const Tensor x = pattern({4, 64}, seed);
  const Tensor h = relu(addmm(s.b1, x, t(s.w1)));
  const Tensor y = addmm(s.b2, h, t(s.w2));
  backward(sum(y));
}

}  // namespace

TEST_CASE("backward passes on several threads into shared leaves add up to the serial sum exactly" *
          doctest::test_suite("threads")) {
  // Without the leaf's lock, two passes that both find no gradient each store their own (one is lost),
  // and two that add in place at once lose updates: the sums came out short in most runs.
  constexpr int kThreads = 4;
  constexpr int kPasses = 1000;
  const Shared serial;
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kPasses; ++k) pass(serial, t * kPasses + k);
  const Shared shared;
  for (int round = 0; round < 3; ++round) {
    for (const Tensor& p : shared.leaves()) set_grad(p, Tensor());
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) {  // start together, so the first accumulations race too
        }
        for (int k = 0; k < kPasses; ++k) pass(shared, t * kPasses + k);
      });
    for (std::thread& th : threads) th.join();
    const std::vector<Tensor> expected = serial.leaves();
    const std::vector<Tensor> got = shared.leaves();
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("round " << round << ", leaf " << i);
      REQUIRE(got[i].grad().defined());
      CHECK(got[i].grad().to_vector<float>() == expected[i].grad().to_vector<float>());
    }
  }
}

TEST_CASE("threads run backward passes whose hooks share a leaf" * doctest::test_suite("threads")) {
  // A shared leaf's gradient hook and post-accumulate-grad hook run on several threads at once, and
  // each thread's own non-leaf has a hook and retains its gradient (autograd/hooks.cpp).
  const Tensor w = leaf({64}, 1);
  std::atomic<int> hook_calls{0}, accumulations{0};
  register_hook(w, [&](const Tensor&) {
    hook_calls.fetch_add(1);
    return Tensor();
  });
  register_post_accumulate_grad_hook(w, [&](const Tensor&) { accumulations.fetch_add(1); });
  constexpr int kThreads = 4, kPasses = 50;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kPasses; ++i) {
        const Tensor y = mul(w, w);
        register_hook(y, [](const Tensor& g) { return mul(g, 2); });
        retain_grad(y);
        backward(sum(y));
        if (y.grad().to_vector<float>() != std::vector<float>(64, 2.0f)) wrong.fetch_add(1);
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
  CHECK(hook_calls.load() == kThreads * kPasses);
  CHECK(accumulations.load() == kThreads * kPasses);
  const std::vector<float> values = w.to_vector<float>();
  const std::vector<float> grad = w.grad().to_vector<float>();
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(grad[i] == 4 * values[i] * kThreads * kPasses);
}

}  // namespace test_threads
