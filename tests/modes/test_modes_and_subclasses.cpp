// tests/modes/test_modes_and_subclasses.cpp: OpCounter phases, LoggingTensor (unwrap, log, rewrap,
// gradients of its type, detach, flatten/unflatten), and a wrapper subclass inside a mode.
#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "modes/logging_tensor.h"
#include "modes/op_counter.h"

namespace test_modes_and_subclasses {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

TEST_CASE("OpCounter counts and orders ops per phase") {
  OpCounter counter;
  const Tensor a = randn({2, 2});
  {
    ModeGuard mode(counter);
    mm(a, a);
    counter.set_phase("backward");
    t(a);
    t(a);
    counter.set_phase("forward");
    relu(a);
  }
  CHECK(counter.counts("forward") == std::map<std::string, std::int64_t>{{"aten.mm.default", 1}, {"aten.relu.default", 1}});
  CHECK(counter.sequence("backward") == std::vector<std::string>{"aten.t.default", "aten.t.default"});
  CHECK(counter.counts("optimizer").empty());
  CHECK(counter.total() == 4);
  CHECK(counter.phase() == "forward");
}

TEST_CASE("LoggingTensor runs ops on its elem, logs them, and wraps the results") {
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor elem = tensor<float>({1, -2, 3});
  const Tensor x = LoggingTensor::wrap(elem, log);
  CHECK(x.subclass()->type_name() == "LoggingTensor");
  CHECK(x.str() == "LoggingTensor(tensor([ 1., -2.,  3.]))");
  const Tensor y = relu(mul(x, x));
  REQUIRE(LoggingTensor::of(y) != nullptr);
  CHECK(LoggingTensor::of(y)->elem().to_vector<float>() == std::vector<float>{1, 4, 9});
  CHECK(*log == LoggingTensor::Log{"aten.mul.Tensor", "aten.relu.default"});
  log->clear();
  detach(y);  // the op, then the non-differentiable-view wrapping: PyTorch 2.8 logs two
  CHECK(*log == LoggingTensor::Log{"aten.detach.default", "aten.detach.default"});

  const FlattenedTensor flat = y.subclass()->flatten(y);
  CHECK(flat.names == std::vector<std::string>{"elem"});
  const Tensor back = y.subclass()->unflatten(flat, y.sizes(), y.strides());
  CHECK(LoggingTensor::of(back)->log() == log);
  CHECK(LoggingTensor::of(back)->elem().is_same(LoggingTensor::of(y)->elem()));
}

TEST_CASE("gradients of LoggingTensor parameters are LoggingTensors, and the backward ops are logged") {
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor w = LoggingTensor::wrap(tensor<float>({1, 2, 3}), log, /*requires_grad=*/true);
  CHECK(w.requires_grad());
  const Tensor x = LoggingTensor::wrap(tensor<float>({4, 5, 6}), log);
  backward(sum(mul(w, x)));
  REQUIRE(LoggingTensor::of(w.grad()) != nullptr);
  CHECK(LoggingTensor::of(w.grad())->elem().to_vector<float>() == std::vector<float>{4, 5, 6});
  CHECK(*log == LoggingTensor::Log{"aten.mul.Tensor", "aten.sum.default", "aten.ones_like.default", "aten.expand.default",
                                   "aten.mul.Tensor", "aten.detach.default", "aten.detach.default"});
}

TEST_CASE("inside a mode, the mode sees each op first, then the wrapper subclass handles it") {
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor x = LoggingTensor::wrap(tensor<float>({1, 2}), log);
  OpCounter counter;
  {
    ModeGuard mode(counter);
    neg(x);
  }
  CHECK(counter.sequence("forward") == std::vector<std::string>{"aten.neg.default"});
  CHECK(*log == LoggingTensor::Log{"aten.neg.default"});
}

TEST_CASE("a handler's own ops run below Autograd, as PyTorch's do, even when the call skipped it") {
  // PyTorch's autograd kernel excludes autograd for everything below it, recording or not, so a
  // __torch_dispatch__ handler never records. Here the wrapper does not require grad (the call has no
  // Autograd key) but its elem does: the op on elem must not record either (checked on PyTorch 1.13:
  // t1 = x + 0; LT(t1).mul_(LT(t1)) leaves t1's grad_fn AddBackward0), and so leaves no node that holds
  // elem (Note [A call from the top passes Autograd]).
  Tensor x = tensor<float>({1, 2});
  requires_grad_(x);
  const Tensor elem = add(x, x);
  const Tensor w = LoggingTensor::wrap(elem, std::make_shared<LoggingTensor::Log>());
  REQUIRE(!w.requires_grad());
  const Tensor sum_ = add(w, w);
  CHECK(!LoggingTensor::of(sum_)->elem().requires_grad());
  mul_(w, w);
  CHECK(std::string(elem.grad_fn()->name()) == "AddBackward0");
  CHECK(elem.use_count() == 2);  // this test and w: no node saved it

  // A mode's handler likewise: an op it runs on a tensor that requires grad records nothing.
  struct Recorder : DispatchMode {
    Tensor x;
    Tensor made;
    std::string_view name() const override { return "Recorder"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {
      if (!made.defined()) made = mul(x, x);
      op.call(stack);
    }
  } mode;
  mode.x = x;
  {
    ModeGuard guard(mode);
    relu(tensor<float>({1, -1}));
  }
  REQUIRE(mode.made.defined());
  CHECK(mode.made.grad_fn() == nullptr);
  CHECK(mul(x, x).grad_fn() != nullptr);  // outside any handler it records
}

TEST_CASE("split of a LoggingTensor: the handler sees split.Tensor, the pieces share one SplitBackward0") {
  // PyTorch 1.13 logs split.Tensor, sum, then backward's ones_like, expand, cat (zeros has no
  // LoggingTensor argument) and AccumulateGrad's two detaches; x.grad is ones in the first piece.
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor x = LoggingTensor::wrap(view(arange(15, {.dtype = ScalarType::Float32}), {5, 3}), log, true);
  const std::vector<Tensor> pieces = x.split(2);
  REQUIRE(pieces.size() == 3);
  CHECK(LoggingTensor::of(pieces[2]) != nullptr);
  CHECK(testing::sizes_of(pieces[2]) == std::vector<std::int64_t>{1, 3});
  CHECK(std::string(pieces[0].grad_fn()->name()) == "SplitBackward0");
  CHECK(pieces[0].grad_fn() == pieces[2].grad_fn());
  backward(sum(pieces[0]));
  CHECK(*log == LoggingTensor::Log{"aten.split.Tensor", "aten.sum.default", "aten.ones_like.default", "aten.expand.default",
                                   "aten.cat.default", "aten.detach.default", "aten.detach.default"});
  CHECK(LoggingTensor::of(x.grad())->elem().to_vector<float>() == std::vector<float>{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK_THROWS_WITH_AS(mul_(pieces[1], tensor<float>({2}, {})),
                       "[aten::mul_] Output 1 of SplitBackward0 is a view and is being modified inplace. This view is the output of "
                       "a function that returns multiple views. Such functions do not allow the output views to be modified "
                       "inplace. You should replace the inplace operation by an out-of-place one.",
                       Error);
}

}  // namespace test_modes_and_subclasses
