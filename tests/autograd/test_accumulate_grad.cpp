// tests/autograd/test_accumulate_grad.cpp: AccumulateGrad, the node that writes a leaf's .grad: when
// it steals a gradient and when it copies one, the one node a leaf shares while graphs hold it, who
// holds whom, and threads that make and drop it concurrently.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>

#include "autograd/accumulate_grad.h"
#include "autograd/backward.h"
#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_accumulate_grad {  // Note [Test files in unity builds]

using namespace strata;
using testing::leaf;
using testing::OpLog;

TEST_CASE("AccumulateGrad steals a gradient it alone holds, and copies one with the wrong layout") {
  OpLog log;
  const Tensor w = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    ModeGuard mode(log);
    backward(sum(clone(w)));  // the gradient arriving at w is expand(ones) (stride 0): not stealable
  }
  const std::vector<std::string>& ops = log.ops;
  CHECK(std::find(ops.begin(), ops.end(), "aten.new_empty_strided.default") != ops.end());
  CHECK(std::find(ops.begin(), ops.end(), "aten.copy_.default") != ops.end());
  CHECK(w.grad().is_contiguous());
  CHECK(w.grad().to_vector<float>() == std::vector<float>(6, 1.0f));

  OpLog log2;
  const Tensor v = leaf({1, 2, 3});
  const Tensor ones_grad = tensor<float>({1, 1, 1});  // outside the mode, which would log its lift_fresh
  {
    ModeGuard mode(log2);
    backward(mul(v, v), ones_grad);
  }
  // mul's gradient is a fresh dense tensor: stolen with detach, which PyTorch 2.8 dispatches twice.
  // Both of mul's input gradients go to v: with a mode on, the engine's input buffer adds them out
  // of place (PyTorch's isTensorSubclassLike is true whenever a dispatch mode is active).
  CHECK(log2.ops == std::vector<std::string>{"aten.mul.Tensor", "aten.mul.Tensor", "aten.mul.Tensor", "aten.add.Tensor",
                                             "aten.detach.default", "aten.detach.default"});
  CHECK(autograd::obeys_layout_contract(t(t(v)), v));
}

// A gradient that is the leaf itself, under create_graph: accumulating it records a copy_ of the
// leaf, and recording looks up the leaf's AccumulateGrad while that node accumulates. PyTorch gives
// x.grad = x with grad_fn CopyBackwards; a lock shared by the two waited for itself (the API fuzzer
// found it as a hang). Note [Gradients accumulate under the accumulator's lock].
TEST_CASE("accumulating a gradient that is the leaf itself, under create_graph, records a copy") {
  const Tensor x = requires_grad_(tensor<float>({1, 2}));
  backward(x, x, std::nullopt, /*create_graph=*/true);
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 2});
  REQUIRE(x.grad().grad_fn() != nullptr);
  CHECK(x.grad().grad_fn()->name() == "CopyBackwards");
  set_grad(x, Tensor());  // the parameter <-> gradient cycle
}

TEST_CASE("a leaf shares one AccumulateGrad while graphs hold it, and makes a new one after they die") {
  const Tensor w = leaf({1, 2});
  {
    const Tensor a = add(w, w);
    const Tensor b = relu(w);
    autograd::Node* first = a.grad_fn()->next_edge(0).function.get();
    CHECK(first->name() == "AccumulateGrad");
    CHECK(a.grad_fn()->next_edge(1).function.get() == first);
    CHECK(b.grad_fn()->next_edge(0).function.get() == first);
    CHECK(first->use_count() == 3);  // two edges of AddBackward0, one of ReluBackward0
    CHECK(autograd::try_get_grad_accumulator(*w.impl()->autograd_meta()).get() == first);
  }
  // Note [A leaf finds its accumulator through a weak pointer]: the node died with its graphs.
  CHECK(autograd::try_get_grad_accumulator(*w.impl()->autograd_meta()) == nullptr);
  CHECK(w.use_count() == 1);  // nothing holds the leaf but `w`
  const Tensor c = relu(w);
  const autograd::Node* made = c.grad_fn()->next_edge(0).function.get();
  CHECK(made->use_count() == 1);
  CHECK(static_cast<const autograd::AccumulateGrad&>(*made).variable().is_same(w));
  backward(sum(c));
  CHECK(w.grad().to_vector<float>() == std::vector<float>{1, 1});
}

TEST_CASE("an AccumulateGrad holds its leaf, and the leaf outlives it") {
  // Under the sanitizers: a node freed while a graph holds it, or a leaf's meta freed before the node
  // that clears its pointer there, is a use after free.
  Tensor y;
  autograd::Node* acc = nullptr;
  {
    const Tensor w = leaf({1, 2});
    y = add(w, w);  // saves nothing: only the accumulator holds w
    acc = y.grad_fn()->next_edge(0).function.get();
  }
  CHECK(static_cast<const autograd::AccumulateGrad&>(*acc).variable().use_count() == 1);  // the node's reference
  const Tensor g = static_cast<const autograd::AccumulateGrad&>(*acc).variable();
  backward(sum(y));
  CHECK(g.grad().to_vector<float>() == std::vector<float>{2, 2});
  y = Tensor();  // the graph and its accumulator go; `g` still holds the leaf
  CHECK(g.use_count() == 1);
  CHECK(autograd::try_get_grad_accumulator(*g.impl()->autograd_meta()) == nullptr);
  const Tensor z = relu(g);
  backward(sum(z));
  CHECK(g.grad().to_vector<float>() == std::vector<float>{3, 3});
}

TEST_CASE("a leaf that stops requiring grad gets no edge, and shares one accumulator again later") {
  const Tensor w = leaf({1, 2});
  requires_grad_(w, false);
  const Tensor x = leaf({3, 4});
  const Tensor y = add(w, x);  // w needs no gradient: no edge
  CHECK_FALSE(y.grad_fn()->next_edge(0).valid());
  requires_grad_(w);
  const Tensor z = mul(w, w);
  autograd::Node* acc = z.grad_fn()->next_edge(0).function.get();
  CHECK(z.grad_fn()->next_edge(1).function.get() == acc);
  CHECK(acc->use_count() == 2);
  backward(sum(z));
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 4});
}

TEST_CASE("threads recording ops on a shared leaf share and free its AccumulateGrad safely" * doctest::test_suite("threads")) {
  // Under the sanitizers this catches a lost count or a use after free in the accumulator lookup
  // (Note [A leaf finds its accumulator through a weak pointer]).
  const Tensor w = leaf({1, 2});
  const Tensor keep = relu(w);  // one graph that holds the accumulator throughout
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&w] {
      for (int i = 0; i < 2000; ++i) {
        const Tensor y = mul(w, w);
        const Tensor z = add(y, w);
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(keep.grad_fn()->next_edge(0).function->use_count() == 1);
  const Tensor alone = leaf({3});
  std::vector<std::thread> more;
  for (int t = 0; t < 4; ++t)
    more.emplace_back([&alone] {
      for (int i = 0; i < 2000; ++i) const Tensor y = relu(alone);  // each graph may free the accumulator
    });
  for (std::thread& t : more) t.join();
  backward(sum(relu(alone)));
  CHECK(alone.grad().to_vector<float>() == std::vector<float>{1});
  // Threads that each make and drop leaves and their accumulators, while another thread's graph holds
  // `w`'s: each node dies before its leaf (checked by the sanitizers).
  std::vector<std::thread> leaves;
  for (int t = 0; t < 4; ++t)
    leaves.emplace_back([&w] {
      for (int i = 0; i < 500; ++i) {
        const Tensor own = leaf({1});
        const Tensor y = add(own, w);
        const Tensor z = relu(own);
      }
    });
  for (std::thread& t : leaves) t.join();
  CHECK(keep.grad_fn()->next_edge(0).function->use_count() == 1);
}

TEST_CASE("threads racing to make and drop a leaf's AccumulateGrad share one node while any holds it" * doctest::test_suite("threads")) {
  // Note [A leaf finds its accumulator through a weak pointer]: threads released together on a fresh
  // leaf race to make its node, then make and drop graphs on it while each keeps its first graph. As
  // every thread's first graph lives until the join, every lookup in every thread must find the node
  // the first lookup made; and once the threads are done nothing else holds the leaf (an extra
  // reference would leak it, a missing one is a use after free under the sanitizers).
  constexpr int kMaxThreads = 4;
  const int num_threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 2u, 4u));
  for (int round = 0; round < 100; ++round) {
    const Tensor w = leaf({1, 2});
    std::array<const autograd::Node*, kMaxThreads> first{};
    std::array<bool, kMaxThreads> same{};
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t)
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < num_threads) {
        }
        const Tensor keep = relu(w);
        first[t] = keep.grad_fn()->next_edge(0).function.get();
        same[t] = true;
        for (int i = 0; i < 200; ++i) {
          const Tensor y = relu(w);
          same[t] = same[t] && y.grad_fn()->next_edge(0).function.get() == first[t];
        }
        ready.fetch_add(1);  // keep `keep` until every thread has looked its last node up
        while (ready.load() < 2 * num_threads) {
        }
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < num_threads; ++t) {
      CHECK(same[t]);
      CHECK(first[t] == first[0]);
    }
    CHECK(w.use_count() == 1);  // no graph is left: only `w` holds the leaf
    CHECK(autograd::try_get_grad_accumulator(*w.impl()->autograd_meta()) == nullptr);
    backward(sum(relu(w)));
    CHECK(w.grad().to_vector<float>() == std::vector<float>{1, 1});
  }
}

}  // namespace test_accumulate_grad
