// tests/autograd/test_multi_grad_hook.cpp: what a hook may ask of the running pass
// (current_graph_task_id, will_engine_execute_node, queue_callback) and register_multi_grad_hook in
// modes All and Any, with the example of upstream's docstring (torch/autograd/graph.py).
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/graph.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_multi_grad_hook {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::autograd;

namespace {
Tensor leaf(std::vector<std::int64_t> sizes) {
  Tensor t = rand(sizes);
  requires_grad_(t);
  return t;
}
std::vector<bool> defined(std::span<const Tensor> grads) {
  std::vector<bool> out;
  for (const Tensor& g : grads) out.push_back(g.defined());
  return out;
}
}  // namespace

TEST_CASE("outside a backward pass: no task id; will_engine_execute_node and queue_callback refuse") {
  CHECK(current_graph_task_id() == -1);
  const Tensor a = leaf({2});
  const Tensor b = mul(a, a);
  CHECK_THROWS_WITH_AS(will_engine_execute_node(*b.grad_fn()),
                       "_get_should_execute_nodes should only be called during the backward pass", Error);
  CHECK_THROWS_WITH_AS(queue_callback([] {}), "Final callbacks can only be installed during backward pass.", Error);
}

TEST_CASE("a pass has an id; callbacks run after every node, in order, and may queue more") {
  const Tensor a = leaf({2});
  const Tensor b = mul(a, a);
  const Tensor unrelated = mul(leaf({2}), 2);
  std::vector<std::string> log;
  std::int64_t id = -1;
  register_hook(b, [&](const Tensor& g) {
    id = current_graph_task_id();
    CHECK(id >= 0);
    CHECK(will_engine_execute_node(*b.grad_fn()));
    CHECK_FALSE(will_engine_execute_node(*unrelated.grad_fn()));
    queue_callback([&] {
      log.push_back("first, id " + std::to_string(current_graph_task_id() - id));
      queue_callback([&] { log.push_back("queued by the first"); });
    });
    queue_callback([&] { log.push_back("second"); });
    log.push_back("hook");
    return g;
  });
  register_post_accumulate_grad_hook(a, [&](const Tensor&) { log.push_back("accumulated"); });
  backward(sum(b), Tensor(), true);
  CHECK(log == std::vector<std::string>{"hook", "accumulated", "first, id 0", "second", "queued by the first"});
  CHECK(current_graph_task_id() == -1);
  log.clear();
  backward(sum(b));
  CHECK(log.size() == 5);
  CHECK(log[2] == "first, id 0");
}

TEST_CASE("register_multi_grad_hook: upstream's docstring example, mode All") {
  const Tensor a = leaf({2, 3}), b = leaf({2, 3});
  const Tensor c = mul(a, b), d = mul(a, b);
  std::vector<std::vector<bool>> calls;
  const Tensor tensors[] = {a, b, c, d};
  MultiGradHandle handle = register_multi_grad_hook(tensors, [&](std::span<const Tensor> grads) {
    CHECK(grads.size() == 4);
    calls.push_back(defined(grads));
  });
  backward(sum(c), Tensor(), true);
  CHECK(calls == std::vector<std::vector<bool>>{{true, true, true, false}});
  (void)grad({sum(c)}, {a}, {}, true);  // upstream's c.sum().backward(inputs=(a,)): b's gradient is not computed
  CHECK(calls == std::vector<std::vector<bool>>{{true, true, true, false}, {true, false, true, false}});
  CHECK_FALSE(handle.expired());
  handle.remove();
  CHECK(handle.expired());
  backward(sum(d), Tensor(), true);
  CHECK(calls.size() == 2);
}

TEST_CASE("register_multi_grad_hook, mode Any: the first gradient, once per pass; tensors without grad skipped") {
  const Tensor a = leaf({2});
  const Tensor b = mul(a, 2), c = mul(a, 3), plain = ones_like(empty({2}));
  std::vector<double> firsts;
  const Tensor tensors[] = {b, plain, c};
  register_multi_grad_hook(
      tensors,
      [&](std::span<const Tensor> grads) {
        REQUIRE(grads.size() == 1);
        firsts.push_back(grads[0].to_vector<double>()[0]);
      },
      MultiGradMode::Any);
  const Tensor loss = add(sum(mul(b, 5)), sum(mul(c, 7)));
  backward(loss, Tensor(), true);
  CHECK(firsts.size() == 1);  // c's node was made last: it runs first, with gradient 7
  CHECK(firsts[0] == 7);
  backward(loss);
  CHECK(firsts.size() == 2);
}

TEST_CASE("register_multi_grad_hook: errors, and a failed registration leaves no hook") {
  const Tensor a = leaf({2});
  const Tensor b = mul(a, 2), plain = ones_like(empty({2}));
  int calls = 0;
  const Tensor tensors[] = {b, plain};
  CHECK_THROWS_WITH_AS(register_multi_grad_hook(tensors, [&](std::span<const Tensor>) { ++calls; }),
                       "cannot register a hook on a tensor that doesn't require gradient", Error);
  REQUIRE(b.grad_fn()->hooks() != nullptr);
  CHECK(b.grad_fn()->hooks()->tensor_pre.front().list->empty());  // b's hook was taken back
  CHECK_THROWS_WITH_AS(register_multi_grad_hook(tensors, nullptr), "register_multi_grad_hook: the hook is empty", Error);
  backward(sum(b));
  CHECK(calls == 0);
}

TEST_CASE("a graph dropped without a backward frees the hook's state (no cycle)") {
  MultiGradHandle handle;
  {
    const Tensor a = leaf({2});
    const Tensor b = mul(a, 2);
    const Tensor tensors[] = {a, b};
    handle = register_multi_grad_hook(tensors, [](std::span<const Tensor>) {});
    CHECK_FALSE(handle.expired());
  }
  CHECK(handle.expired());
  handle.remove();  // nothing left to remove
}

}  // namespace test_multi_grad_hook
