// tests/core/toy_ops.h: ops registered by the core tests themselves, so core's dispatcher and
// interposer are tested without the ops library. test::twice doubles a float32 tensor on CPU;
// test::ping takes no tensor (like the profiler ops); test::fail always throws.
#pragma once

#include <mutex>

#include "core/dispatch/dispatcher.h"

namespace strata::testing {

inline void twice_cpu(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const Tensor self = stack.back().to_tensor();
  Tensor out = strata::detail::make_contiguous_tensor(self.sizes(), self.dtype(), Device::CPU);
  const std::vector<float> in = self.to_vector<float>();
  float* o = out.data_ptr<float>();
  for (std::size_t i = 0; i < in.size(); ++i) o[i] = 2 * in[i];
  stack.back() = IValue(std::move(out));
}

inline void ping_cpu(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const std::int64_t x = stack.back().to_int();
  stack.back() = IValue(x + 1);
}

inline void fail_cpu(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  STRATA_CHECK(false, "expected a tensor of shape ", shape_str(stack.back().to_tensor().sizes()), " to fail");
}

struct ToyOps {
  OperatorHandle twice, ping, fail;
};

inline const ToyOps& toy_ops() {
  static ToyOps ops = [] {
    Dispatcher& d = Dispatcher::singleton();
    return ToyOps{d.def("test", "twice(Tensor self) -> Tensor", {&twice_cpu, "twice"}, {}),
                  d.def("test", "ping(int x) -> int", {&ping_cpu, "ping"}, {&ping_cpu, "ping"}),
                  d.def("test", "fail(Tensor self) -> Tensor", {&fail_cpu, "fail"}, {})};
  }();
  return ops;
}

inline Tensor call_twice(const Tensor& t) {
  Stack stack;
  stack.emplace_back(t);
  toy_ops().twice.call(stack);
  return stack.back().to_tensor();
}

}  // namespace strata::testing
