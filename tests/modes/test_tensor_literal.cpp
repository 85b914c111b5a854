// tests/modes/test_tensor_literal.cpp: tensor(values) and aten::lift_fresh (Note [A tensor from values
// is lifted], ops/tensor_literal.h): what a dispatch mode logs for it (PyTorch 2.8's torch.tensor
// sequence), FakeTensorMode turning the literal into a fake, and eager calls left as they were.
#include <doctest/doctest.h>

#include <vector>

#include "modes/debug_mode.h"
#include "modes/fake_tensor.h"
#include "modes/op_counter.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_tensor_literal {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

TEST_CASE("tensor(values) under FakeTensorMode is a fake of its shape and dtype that mixes with fakes") {
  FakeTensorMode mode;  // allow_non_fake_inputs is off: the literals are lifted, not let through
  Tensor ints, rows, scalar, total;
  {
    ModeGuard guard(mode);
    ints = tensor({1, 2, 3});
    rows = tensor<float>({{1, 2}, {3, 4}, {5, 6}});
    scalar = tensor<double>({2.5}, {});
    const Tensor x = randn({3, 2});
    // Before tensor() dispatched lift_fresh this was "Please convert all Tensors to FakeTensors
    // first ... Found in aten.add.Tensor(FakeTensor(..., size=(3, 2)), tensor(..., size=(3, 2)))".
    total = add(x, rows);
  }
  for (const Tensor* t : {&ints, &rows, &scalar, &total}) {
    REQUIRE(FakeTensor::is_fake(*t));
    CHECK(FakeTensor::of(*t)->belongs_to(mode));
    CHECK(t->device() == Device::CPU);
    CHECK(FakeTensor::meta_of(*t).is_meta());
    CHECK_FALSE(t->impl()->has_data());
    CHECK(t->is_leaf());
    CHECK_FALSE(t->requires_grad());
  }
  CHECK(ints.sizes() == std::vector<std::int64_t>{3});
  CHECK(ints.dtype() == ScalarType::Int64);
  CHECK(rows.sizes() == std::vector<std::int64_t>{3, 2});
  CHECK(rows.strides() == std::vector<std::int64_t>{2, 1});
  CHECK(rows.dtype() == ScalarType::Float32);
  CHECK(scalar.dim() == 0);
  CHECK(scalar.dtype() == ScalarType::Float64);
  CHECK(total.sizes() == std::vector<std::int64_t>{3, 2});
  CHECK(ints.str() == "FakeTensor(..., size=(3,), dtype=torch.int64)");
  CHECK_THROWS_AS(ints.data_ptr<std::int64_t>(), Error);
  // Outside the mode the fakes keep running as fakes (FakeTensor.__torch_dispatch__): no data needed.
  const Tensor product = mul(total, rows);
  CHECK(FakeTensor::is_fake(product));
  CHECK(product.sizes() == std::vector<std::int64_t>{3, 2});
  // A literal that then requires grad is a fake leaf whose gradient is a fake.
  {
    ModeGuard guard(mode);
    const Tensor w = requires_grad_(tensor<float>({1, 2, 3}));
    backward(sum(mul(w, randn({3}))));
    REQUIRE(w.grad().defined());
    CHECK(FakeTensor::is_fake(w.grad()));
    CHECK(w.grad().sizes() == std::vector<std::int64_t>{3});
  }
}

TEST_CASE("a dispatch mode sees aten::lift_fresh for each tensor(values), returning the tensor itself") {
  // PyTorch 2.8 (and 1.13) under LoggingTensorMode, for `a = torch.tensor([1., 2.]); a + torch.tensor(2.)`:
  //   $0 = torch._ops.aten.lift_fresh.default($0)
  //   $1 = torch._ops.aten.lift_fresh.default($1)
  //   $2 = torch._ops.aten.add.Tensor($0, $1)
  auto program = [] {
    const Tensor a = tensor<float>({1, 2});
    const Tensor two = tensor<float>({2}, {});
    const Tensor both = add(a, two);
    CHECK(both.to_vector<float>() == std::vector<float>{3, 4});
    CHECK(tensor({7, 8}).to_vector<std::int64_t>() == std::vector<std::int64_t>{7, 8});
  };
  OpCounter counter;
  {
    ModeGuard guard(counter);
    program();
  }
  DebugMode debug({.record_ids = true});
  {
    DebugMode::Guard guard(debug);
    program();
  }
  CHECK(counter.sequence("forward") ==
        std::vector<std::string>{"aten.lift_fresh.default", "aten.lift_fresh.default", "aten.add.Tensor",
                                 "aten.lift_fresh.default"});
  // The id of each lift_fresh's output is its input's: the op returns self, as upstream's `$0 = ...($0)`.
  CHECK(debug.debug_string() ==
        "    aten::lift_fresh(t$0: f32[2])  ->  t$0: f32[2]\n"
        "    aten::lift_fresh(t$1: f32[])  ->  t$1: f32[]\n"
        "    aten::add.Tensor(t$0: f32[2], t$1: f32[])  ->  t$2: f32[2]\n"
        "    aten::lift_fresh(t$3: i64[2])  ->  t$3: i64[2]");
}

TEST_CASE("without a mode tensor(values) is the tensor it built, held by nothing else") {
  const Tensor t = tensor<float>({{1, 2, 3}, {4, 5, 6}});
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(t.sizes() == std::vector<std::int64_t>{2, 3});
  CHECK(t.strides() == std::vector<std::int64_t>{3, 1});
  CHECK(t.device() == Device::CPU);
  CHECK(t.is_leaf());
  CHECK_FALSE(t.requires_grad());
  CHECK(t.grad_fn() == nullptr);
  CHECK(t.impl()->use_count() == 1);
  CHECK(t.impl()->storage().use_count() == 1);
  CHECK(tensor({1, 2}).dtype() == ScalarType::Int64);
  CHECK(tensor<bool>({true, false}).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK_THROWS_WITH_AS(tensor<float>({1, 2, 3}, {2}), "tensor(): shape [2] needs 2 values but 3 were given", Error);
  // lift_fresh itself returns its argument, history included (its row records no node).
  const Tensor w = requires_grad_(ones({2}));
  Stack stack;
  stack.emplace_back(w);
  ops::op("aten::lift_fresh").call(stack);
  REQUIRE(stack.size() == 1);
  CHECK(std::as_const(stack.back()).to_tensor().is_same(w));
  CHECK(w.grad_fn() == nullptr);
  CHECK(w.is_leaf());
}

}  // namespace test_tensor_literal
