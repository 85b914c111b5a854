// tests/ops/test_storageless_views.cpp: views of a wrapper tensor taken below the interposer (a
// handler that excludes the Python key and runs a view op on the wrapper itself). Such a view has no
// storage; it keeps the Python key, so every data access refuses it instead of reading null
// (Note [A view keeps its source's keys]).
#include <doctest/doctest.h>

#include <functional>

#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "core/interpose/subclass.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_storageless_views {  // Note [Test files in unity builds]

using namespace strata;

namespace {

// __torch_dispatch__ that forgets to unwrap: it runs the op on the wrapper itself, below the interposer.
struct ViewsItself final : TensorSubclass {
  std::string_view type_name() const override { return "ViewsItself"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override { call_below_python(op, stack); }
  FlattenedTensor flatten(const Tensor&) const override { return {}; }
  Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }
};

Tensor wrapper(IntArrayRef sizes, IntArrayRef strides) {
  return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new ViewsItself()), sizes, strides, 0, ScalarType::Float32,
                             Device::CPU);
}

const char* const kNoStorage = "Cannot access data pointer of Tensor that doesn't have storage";

struct ViewCase {
  const char* name;
  std::function<Tensor(const Tensor&)> take;
  const char* repr;
};

}  // namespace

TEST_CASE("a view of a wrapper taken below the interposer refuses every data access") {
  const Tensor w = wrapper({2, 3}, {3, 1});
  const std::vector<ViewCase> cases = {
      {"detach", [](const Tensor& x) { return detach(x); }, "tensor(..., size=(2, 3), storage=None)"},
      {"t", [](const Tensor& x) { return t(x); }, "tensor(..., size=(3, 2), storage=None)"},
      {"transpose", [](const Tensor& x) { return transpose(x, 0, 1); }, "tensor(..., size=(3, 2), storage=None)"},
      {"view", [](const Tensor& x) { return view(x, {6}); }, "tensor(..., size=(6,), storage=None)"},
      {"_unsafe_view", [](const Tensor& x) { return _unsafe_view(x, {3, 2}); }, "tensor(..., size=(3, 2), storage=None)"},
      {"expand", [](const Tensor& x) { return expand(x, {4, 2, 3}); }, "tensor(..., size=(4, 2, 3), storage=None)"},
      {"as_strided", [](const Tensor& x) { return as_strided(x, {2, 2}, {1, 2}, 1); }, "tensor(..., size=(2, 2), storage=None)"},
      {"unsqueeze", [](const Tensor& x) { return unsqueeze(x, 0); }, "tensor(..., size=(1, 2, 3), storage=None)"},
      {"squeeze", [](const Tensor& x) { return squeeze(unsqueeze(x, 1), 1); }, "tensor(..., size=(2, 3), storage=None)"},
  };
  const Tensor real = ones_like(strata::empty({2, 3}));
  for (const ViewCase& c : cases) {
    INFO(c.name);
    const Tensor v = c.take(w);  // the handler runs the view op on w itself
    REQUIRE(v.defined());
    CHECK(v.subclass() == nullptr);
    CHECK_FALSE(v.impl()->has_data());
    CHECK(v.key_set().has(DispatchKey::Python));  // so it never takes the unboxed fast path
    // The unboxed front end, a boxed call and a composite: each reaches the CPU kernel's check.
    CHECK_THROWS_WITH_AS(add(v, v), doctest::Contains(kNoStorage), Error);
    CHECK_THROWS_WITH_AS(relu(v), doctest::Contains(kNoStorage), Error);
    CHECK_THROWS_WITH_AS(clone(v), doctest::Contains(kNoStorage), Error);
    CHECK_THROWS_WITH_AS(sum_to(v, {}), doctest::Contains(kNoStorage), Error);
    CHECK_THROWS_WITH_AS(to(v, ScalarType::Float64), doctest::Contains(kNoStorage), Error);
    CHECK_THROWS_WITH_AS(v.to_vector<float>(), kNoStorage, Error);
    CHECK_THROWS_WITH_AS(v.data_ptr<float>(), kNoStorage, Error);
    CHECK_THROWS_WITH_AS(v.raw_data(), kNoStorage, Error);
    CHECK(v.str() == c.repr);
    // A view of the view keeps the key too; a dispatch mode sees the op, then the kernel refuses it.
    const Tensor vv = detach(v);
    CHECK(vv.key_set().has(DispatchKey::Python));
    CHECK_THROWS_WITH_AS(mul(vv, 2.0), doctest::Contains(kNoStorage), Error);
    testing::OpLog log;
    {
      ModeGuard mode(log);
      CHECK_THROWS_WITH_AS(neg(v), doctest::Contains(kNoStorage), Error);
    }
    CHECK(log.ops == std::vector<std::string>{"aten.neg.default"});
  }
  // In place, as the destination and as the source.
  const Tensor v = t(t(w));
  CHECK_THROWS_WITH_AS(copy_(real, v), doctest::Contains(kNoStorage), Error);
  CHECK_THROWS_WITH_AS(copy_(v, real), doctest::Contains(kNoStorage), Error);
  CHECK_THROWS_WITH_AS(add_(v, real), doctest::Contains(kNoStorage), Error);
  CHECK_THROWS_WITH_AS(mm(v, t(real)), doctest::Contains(kNoStorage), Error);
}

TEST_CASE("the kernel's error names the argument without storage") {
  const Tensor v = t(wrapper({2, 3}, {3, 1}));
  const Tensor real = ones_like(strata::empty({3, 2}));
  CHECK_THROWS_WITH_AS(add(real, v),
                       "[aten::add] Cannot access data pointer of Tensor that doesn't have storage: argument #1 'other' is a "
                       "view of a wrapper tensor taken with the Python key excluded; take views of its inner tensor instead",
                       Error);
}

TEST_CASE("a view of a wrapper inside a tensor list is refused, not read") {
  // The CPU kernel checks the elements of a Tensor[] argument as it checks a Tensor argument.
  const Tensor v = t(t(wrapper({2, 3}, {3, 1})));
  const Tensor real = ones_like(strata::empty({2, 3}));
  const char* const expected =
      "Cannot access data pointer of Tensor that doesn't have storage: argument #0 'tensors' is a view of a wrapper "
      "tensor taken with the Python key excluded; take views of its inner tensor instead";
  CHECK_THROWS_WITH_AS(cat({real, v}, 0), (std::string("[aten::cat] ") + expected).c_str(), Error);
  CHECK_THROWS_WITH_AS(stack({real, v}, 1), (std::string("[aten::stack] ") + expected).c_str(), Error);
  CHECK_THROWS_WITH_AS(stack({v}, 0), doctest::Contains(kNoStorage), Error);
}

TEST_CASE("item of a one-element view of a wrapper is refused") {
  const Tensor w = wrapper({1}, {1});
  for (const Tensor& v : {detach(w), view(w, {}), expand(w, {1, 1}), as_strided(w, {}, {}, 0)}) {
    CHECK_THROWS_WITH_AS(v.item(), kNoStorage, Error);
    CHECK_THROWS_WITH_AS(v.item<float>(), kNoStorage, Error);
  }
  CHECK(view(w, {}).str() == "tensor(..., size=(), storage=None)");
}

TEST_CASE("views of a wrapper that requires grad record history and still refuse data") {
  const Tensor w = wrapper({2, 3}, {3, 1});
  requires_grad_(w);
  const Tensor v = t(w);
  CHECK(v.requires_grad());
  CHECK(v.key_set().has(DispatchKey::Python));
  CHECK_THROWS_WITH_AS(add(v, v), doctest::Contains(kNoStorage), Error);
  CHECK(v.str() == "tensor(..., size=(3, 2), storage=None, grad_fn=<TBackward0>)");
}

}  // namespace test_storageless_views
