// tests/cold_start/test_cold_start.cpp: registration racing dispatch in a fresh process. Registration
// happens once per process (Note [Registration on first use]), so this is an executable of its own
// whose one test is the first thing it runs: threads released together register autograd (the first
// requires_grad_()), the op table (the first op), an op of their own and a kernel for it, while
// others dispatch boxed calls, which read the tables those registrations rewrite (Note [Registration
// is safe from any thread]). Suite "threads": scripts/tsan runs it under ThreadSanitizer, which
// reports any unsynchronised write and read; the results are checked here too.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatcher.h"
#include "ops/functions.h"
#include "ops/op_table.h"

using namespace strata;

namespace {

void negate_cpu(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const Tensor self = stack.back().to_tensor();
  Tensor out = strata::detail::make_contiguous_tensor(self.sizes(), self.dtype(), Device::CPU);
  const std::vector<float> in = self.to_vector<float>();
  for (std::size_t i = 0; i < in.size(); ++i) out.data_ptr<float>()[i] = -in[i];
  stack.back() = IValue(std::move(out));
}

// add.Tensor through the boxed path, which reads the op's resolved table on every call.
Tensor boxed_add(const OperatorHandle& add, const Tensor& a, const Tensor& b) {
  Stack stack;
  stack.emplace_back(a);
  stack.emplace_back(b);
  stack.emplace_back(Scalar(1));
  add.call(stack);
  return stack.back().to_tensor();
}

}  // namespace

TEST_CASE("threads racing to register and dispatch at cold start" * doctest::test_suite("threads")) {
  constexpr int kThreads = 6;
  std::atomic<int> ready{0};
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  auto start_together = [&ready] {
    ready.fetch_add(1);
    while (ready.load() < kThreads) {
    }
  };
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start_together();
      try {
        if (t % 3 == 0) {
          // Registers autograd (and the op table) on first use, then trains a step's worth of it.
          const Tensor w = tensor<float>({1, 2, 3});
          requires_grad_(w);
          backward(sum(mul(w, w)));
          if (w.grad().to_vector<float>() != std::vector<float>{2, 4, 6}) failures[t] = "wrong gradient";
        } else if (t % 3 == 1) {
          // Dispatches boxed calls all the while: the table entries it reads are rewritten meanwhile.
          const OperatorHandle add = ops::op("aten::add", "Tensor");
          const Tensor a = tensor<float>({1, 2});
          for (int i = 0; i < 2000; ++i)
            if (boxed_add(add, a, a).to_vector<float>() != std::vector<float>{2, 4}) failures[t] = "wrong sum";
        } else {
          // Registers an op of its own, and then a kernel for it at another key, and calls it.
          Dispatcher& d = Dispatcher::singleton();
          const OperatorHandle neg = d.def("test", "cold_negate" + std::to_string(t) + "(Tensor self) -> Tensor",
                                           {&negate_cpu, "negate"}, {});
          d.register_kernel(neg, DispatchKey::Meta, {&negate_cpu, "negate"});
          Stack stack;
          stack.emplace_back(tensor<float>({1, -2}));
          neg.call(stack);
          if (stack.back().to_tensor().to_vector<float>() != std::vector<float>{-1, 2}) failures[t] = "wrong negation";
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(failures[t].empty());
  }
}
