// tests/core/test_dispatcher.cpp: registration, lookup, the table dump and the dispatch trace (golden
// text), errors that name the op, and the missing-kernel error.
#include <doctest/doctest.h>

#include <sstream>

#include "core/dispatch/dispatcher.h"
#include "core/interpose/interposer.h"
#include "ops/tensor_literal.h"
#include "tests/core/toy_ops.h"

namespace test_dispatcher {  // Note [Test files in unity builds]

using namespace strata;
using strata::testing::call_twice;
using strata::testing::toy_ops;

TEST_CASE("an op is found by its qualified name and overload, and prints as PyTorch's OpOverload") {
  const OperatorHandle op = toy_ops().twice;
  CHECK(Dispatcher::singleton().find("test::twice").value() == op);
  CHECK_FALSE(Dispatcher::singleton().find("test::twice", "Tensor").has_value());
  CHECK(op.str() == "test.twice.default");
  CHECK(op.name().qualified() == "test::twice");
  CHECK_THROWS_WITH_AS(Dispatcher::singleton().find_or_throw("test::nope"), "no operator named test::nope is registered",
                       Error);
}

TEST_CASE("registering the same op twice is an error") {
  (void)toy_ops();
  CHECK_THROWS_WITH_AS(Dispatcher::singleton().def("test", "twice(Tensor self) -> Tensor", {}, {}),
                       "operator test.twice.default is already registered", Error);
}

TEST_CASE("dump_table shows what runs at each key") {
  register_interposer();  // as the first mode or wrapper tensor does
  const std::string expected =
      "test.twice.default: twice(Tensor self) -> Tensor\n"
      "  Autograd (none)\n"
      "  Python   fallback interposer\n"
      "  Meta     (none)\n"
      "  CPU      kernel twice\n";
  CHECK(Dispatcher::singleton().dump_table(toy_ops().twice) == expected);
}

TEST_CASE("a call runs the kernel of the highest key") {
  const Tensor x = tensor<float>({1, 2, 3});
  CHECK(call_twice(x).to_vector<float>() == std::vector<float>{2, 4, 6});
  Stack stack;
  stack.emplace_back(std::int64_t{41});
  toy_ops().ping.call(stack);
  CHECK(stack.back().to_int() == 42);
}

TEST_CASE("the dispatch trace prints each step with its keys, indented by nesting") {
  const Tensor x = tensor<float>({1});  // made before the trace, which would show its aten::lift_fresh
  std::ostringstream out;
  {
    DispatchTraceGuard trace(out);
    call_twice(x);
  }
  CHECK(out.str() == "test.twice.default(f32[1]) [CPU] -> CPU: kernel twice\n");
  CHECK_FALSE(dispatch_trace_enabled());
}

TEST_CASE("errors leaving an op are named after the innermost op") {
  CHECK_THROWS_WITH_AS(
      [] {
        Stack stack;
        stack.emplace_back(tensor<float>({1, 2}));
        toy_ops().fail.call(stack);
      }(),
      "[test::fail] expected a tensor of shape [2] to fail", Error);
}

TEST_CASE("a key with neither a kernel nor a fallback is a clear error") {
  const Tensor meta = strata::detail::make_contiguous_tensor({2}, ScalarType::Float32, Device::Meta);
  CHECK_THROWS_WITH_AS(call_twice(meta),
                       "[test::twice] Could not run 'test::twice' with arguments from the 'Meta' backend: no kernel or "
                       "fallback is registered at Meta (keys [Meta])",
                       Error);
}

TEST_CASE("a call with every key excluded is an error, not undefined behaviour") {
  const Tensor x = tensor<float>({1});
  ExcludeKeyGuard no_cpu(DispatchKey::CPU);
  CHECK_THROWS_WITH_AS(call_twice(x),
                       "[test::twice] no dispatch key is left to run (every key of the call is excluded on this thread)",
                       Error);
}

}  // namespace test_dispatcher
