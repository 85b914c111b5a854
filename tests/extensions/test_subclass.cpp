// tests/extensions/test_subclass.cpp: non-wrapper subclasses (make_subclass, PyTorch's _make_subclass):
// a tensor with real data whose ops reach its handler, which calls through below the Python key.
#include <doctest/doctest.h>

#include <memory>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/subclass.h"
#include "ops/functions.h"
#include "modes/logging_tensor.h"
#include "tests/test_helpers.h"

namespace test_subclass {  // Note [Test files in unity builds]

using namespace strata;
using testing::OpLog;

namespace {
// A Tagged tensor over `data`: its ops are logged, and their results are Tagged too.
struct Made {
  Tensor tensor;
  std::shared_ptr<std::vector<std::string>> log;
};
Made tagged(const Tensor& data) {
  auto* payload = new testing::LoggingSubclass("Tagged", /*rewraps=*/true);
  return {make_subclass(IntrusivePtr<TensorSubclass>(payload), data), payload->log};
}
}  // namespace

TEST_CASE("make_subclass: real data, shared with the source, readable and writable") {
  Tensor data = tensor<float>({1, 2, 3});
  Made x = tagged(data);
  REQUIRE(x.tensor.subclass() != nullptr);
  CHECK(x.tensor.subclass()->type_name() == "Tagged");
  CHECK(x.tensor.key_set().has(DispatchKey::Python));
  CHECK(x.tensor.data_ptr<float>() == data.data_ptr<float>());
  CHECK(x.tensor.to_vector<float>() == std::vector<float>{1, 2, 3});
  data.data_ptr<float>()[0] = 5;
  CHECK(x.tensor.to_vector<float>() == std::vector<float>{5, 2, 3});
  CHECK(x.log->empty());  // making it and reading its data dispatched nothing
}

TEST_CASE("make_subclass: ops reach the handler, which calls the kernels below the Python key") {
  Made x = tagged(tensor<float>({1, -2, 3}));
  Tensor y = relu(x.tensor);
  Tensor z = add(y, x.tensor);
  CHECK(*x.log == std::vector<std::string>{"aten.relu.default", "aten.add.Tensor"});
  CHECK(z.subclass() != nullptr);  // the handler rewrapped the result
  CHECK(z.to_vector<float>() == std::vector<float>{2, -2, 6});
  // In place: the kernel writes the shared data and bumps the shared version.
  const std::uint32_t before = x.tensor.impl()->version();
  add_(x.tensor, tensor<float>({1, 1, 1}));
  CHECK(x.tensor.to_vector<float>() == std::vector<float>{2, -1, 4});
  CHECK(x.tensor.impl()->version() == before + 1);
  CHECK(x.log->back() == "aten.add_.Tensor");
  // A view: the kernel's alias keeps the Python key (Note [A view keeps its source's keys]) and the
  // handler rewraps it; it shares the data.
  Tensor v = t(x.tensor);
  CHECK(v.subclass() != nullptr);
  CHECK(v.raw_data() == x.tensor.raw_data());
  CHECK(v.to_vector<float>() == std::vector<float>{2, -1, 4});
}

TEST_CASE("make_subclass: a mode sees the op first; autograd runs above the handler") {
  Made x = tagged(tensor<float>({1, 2}));
  OpLog mode;
  {
    ModeGuard guard(mode);
    neg(x.tensor);
  }
  CHECK(mode.ops == std::vector<std::string>{"aten.neg.default"});
  CHECK(*x.log == std::vector<std::string>{"aten.neg.default"});  // the mode's call reached the subclass

  requires_grad_(x.tensor);
  Tensor loss = sum(mul(x.tensor, x.tensor));
  CHECK(loss.grad_fn() != nullptr);
  backward(loss);
  CHECK(x.tensor.grad().to_vector<float>() == std::vector<float>{2, 4});
}

TEST_CASE("make_subclass: refuses what is not a plain tensor with data") {
  auto payload = IntrusivePtr<TensorSubclass>(new testing::LoggingSubclass("Tagged", /*rewraps=*/true));
  CHECK_THROWS_WITH_AS(make_subclass(payload, Tensor()), "make_subclass: data is an undefined tensor", Error);
  Made x = tagged(tensor<float>({1.0f}));
  CHECK_THROWS_WITH_AS(make_subclass(payload, x.tensor), "make_subclass: data is already a Tagged tensor; pass a plain tensor",
                       Error);
  CHECK_THROWS_WITH_AS(make_subclass(IntrusivePtr<TensorSubclass>(), tensor<float>({1.0f})),
                       "make_subclass needs a subclass payload", Error);
  // A wrapper still has no data.
  Tensor w = testing::make_inert_wrapper({2}, {1});
  CHECK_THROWS_WITH_AS(w.raw_data(), "cannot access the data of a Inert wrapper tensor; unwrap it first", Error);
}

TEST_CASE("an in-place op a wrapper's handler runs on its inner tensor counts on both (a documented difference)") {
  // PyTorch 1.13 and 2.8 count the write once, on the wrapper, at ADInplaceOrView above the Python
  // key; the handler's own add_ on the inner tensor runs below it and counts nothing (inner._version
  // stays 0). strata's kernels count their own writes, so the inner tensor counts it too
  // (docs/choices.md, "In-place ops under autograd").
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  const Tensor inner = zeros({3});
  const Tensor w = tracer::LoggingTensor::wrap(inner, log);
  add_(w, ones({3}));
  CHECK(*log == std::vector<std::string>{"aten.add_.Tensor"});
  CHECK(w.impl()->version() == 1);
  CHECK(inner.impl()->version() == 1);  // PyTorch: 0
  CHECK(inner.to_vector<float>() == std::vector<float>{1, 1, 1});
}

}  // namespace test_subclass
