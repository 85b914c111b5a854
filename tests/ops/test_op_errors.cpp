// tests/ops/test_op_errors.cpp: the errors the op records (tests/ops/records/) cannot express: wrapper
// tensors without data, undefined tensors, short stacks, devices that mix, overlapping writes, and the
// composites' own checks. Messages use PyTorch's wording where PyTorch has one.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "ops/record_function.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_op_errors {  // Note [Test files in unity builds]

using namespace strata;

namespace {
Tensor f32(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes)); }
Tensor i64(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes, {.dtype = ScalarType::Int64})); }
}  // namespace

TEST_CASE("a CPU kernel refuses a tensor without data instead of reading null") {
  const Tensor w = testing::make_inert_wrapper({2}, {1});
  ExcludeKeyGuard no_python(DispatchKey::Python);
  CHECK_THROWS_WITH_AS(neg(w),
                       "[aten::neg] Cannot access data pointer of Tensor that doesn't have storage: argument #0 'self' is a "
                       "wrapper tensor (Inert) that reached the CPU kernel; was the Python key excluded around it?",
                       Error);
}

TEST_CASE("an undefined tensor where the schema requires one is an error on both paths") {
  const char* msg = "[aten::add] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #1 'other'";
  CHECK_THROWS_WITH_AS(add(f32({2}), Tensor()), msg, Error);  // the unboxed front end
  Stack stack{f32({2}), IValue(), 1};
  CHECK_THROWS_WITH_AS(ops::op("aten::add", "Tensor").call(stack), msg, Error);  // a boxed call
  Stack tensor_none{f32({2}), IValue(Tensor()), 1};
  CHECK_THROWS_WITH_AS(ops::op("aten::add", "Tensor").call(tensor_none), msg, Error);
  CHECK_THROWS_WITH_AS(relu(Tensor()),
                       "[aten::relu] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'",
                       Error);
}

// Note [An undefined tensor answers or refuses]: composites check their arguments themselves, and an
// undefined tensor's autograd queries answer as PyTorch's do. Before, each of these dereferenced null.
TEST_CASE("composites refuse an undefined tensor; its autograd queries answer") {
  const auto message = [](const char* op) {
    return std::string("[") + op + "] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'";
  };
  CHECK_THROWS_WITH_AS(reshape(Tensor(), {2}), message("aten::reshape").c_str(), Error);
  CHECK_THROWS_WITH_AS(contiguous(Tensor()), message("aten::contiguous").c_str(), Error);
  CHECK_THROWS_WITH_AS(to(Tensor(), ScalarType::Float64), message("aten::to").c_str(), Error);
  CHECK_THROWS_WITH_AS(sum_to(Tensor(), {2}), message("aten::sum_to").c_str(), Error);
  const Tensor undefined;
  CHECK_FALSE(undefined.requires_grad());
  CHECK(undefined.is_leaf());
  CHECK_FALSE(undefined.grad().defined());
  CHECK(undefined.grad_fn() == nullptr);
  CHECK_THROWS_WITH_AS(undefined.item(), "item() on an undefined tensor", Error);
  // Found by the API fuzzer: these read the dtype of the missing impl before checking it.
  CHECK_THROWS_WITH_AS(undefined.to_vector<float>(), "cannot access the data of an undefined tensor", Error);
  CHECK_THROWS_WITH_AS(undefined.to_vector<bool>(), "cannot access the data of an undefined tensor", Error);
  CHECK_THROWS_WITH_AS(undefined.raw_data(), "cannot access the data of an undefined tensor", Error);
  CHECK_THROWS_WITH_AS(undefined.data_ptr<double>(), "cannot access the data of an undefined tensor", Error);
}

// sum_to_size's check, before any index arithmetic: a shape with more dimensions than the tensor made
// sum_to's count of leading dimensions wrap around to ~2^64 (it looped until allocation failed).
TEST_CASE("sum_to refuses a shape the tensor does not broadcast to") {
  CHECK_THROWS_WITH_AS(sum_to(f32({3}), {2, 3}), "[aten::sum_to] size {[2, 3]} is not expandable to size {[3]}.", Error);
  CHECK_THROWS_WITH_AS(sum_to(f32({}), {1}), "[aten::sum_to] size {[1]} is not expandable to size {[]}.", Error);
  CHECK_THROWS_WITH_AS(sum_to(f32({2, 3}), {3, 1}), "[aten::sum_to] size {[3, 1]} is not expandable to size {[2, 3]}.", Error);
  CHECK_THROWS_WITH_AS(sum_to(f32({2, 1}), {2, 0}), "[aten::sum_to] size {[2, 0]} is not expandable to size {[2, 1]}.", Error);
  CHECK(testing::sizes_of(sum_to(f32({4, 2, 3}), {2, 1})) == std::vector<std::int64_t>{2, 1});
  CHECK(testing::sizes_of(sum_to(f32({4, 0, 3}), {1, 3})) == std::vector<std::int64_t>{1, 3});
  CHECK(sum_to(f32({2, 3}), {}).dim() == 0);
}

TEST_CASE("a boxed call with too few arguments is an error, not a read past the stack") {
  Stack stack{f32({2})};
  CHECK_THROWS_WITH_AS(ops::op("aten::add", "Tensor").call(stack),
                       "[aten::add] expected 3 arguments (add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor) "
                       "but the stack holds 1 values",
                       Error);
}

TEST_CASE("CPU and meta tensors do not mix, except a 0-d CPU tensor and copy_") {
  const Tensor m = strata::empty({2, 3}, {.device = Device::Meta});
  CHECK_THROWS_WITH_AS(add(m, f32({2, 3})),
                       "[aten::add] Expected all tensors to be on the same device, but found at least two devices, meta and cpu!",
                       Error);
  const Tensor r = mul(m, scalar_tensor(2.0, ScalarType::Float32));
  CHECK(r.device() == Device::Meta);
  CHECK(copy_(strata::empty({2, 3}, {.device = Device::Meta}), f32({2, 3})).device() == Device::Meta);
}

TEST_CASE("mixed devices: a dispatch mode sees the op first, then the kernel refuses it, as in PyTorch") {
  // PyTorch refuses in the backend kernel, below the Python key: a TorchDispatchMode logs aten.add
  // and the error comes when it calls through (or not at all, if it answers the op itself).
  struct Logged final : DispatchMode {
    std::string_view name() const override { return "Logged"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {
      seen.push_back(op.str());
      if (answer) {
        const Tensor self = stack[stack.size() - op.schema().arguments().size()].to_tensor();
        stack.resize(stack.size() - op.schema().arguments().size());
        stack.emplace_back(self);
        return;
      }
      op.call(stack);
    }
    std::vector<std::string> seen;
    bool answer = false;
  } mode;
  const Tensor m = strata::empty({2, 3}, {.device = Device::Meta});
  const Tensor c = f32({2, 3});
  {
    ModeGuard guard(mode);
    CHECK_THROWS_WITH_AS(add(m, c),
                         "[aten::add] Expected all tensors to be on the same device, but found at least two devices, meta "
                         "and cpu!",
                         Error);
    mode.answer = true;
    CHECK(add(c, m).is_same(c));  // the mode answered: no kernel ran, nothing to refuse
  }
  CHECK(mode.seen == std::vector<std::string>{"aten.add.Tensor", "aten.add.Tensor"});
  // Below autograd too: a recording op is refused by its kernel, before any node is recorded.
  const Tensor leaf = requires_grad_(f32({2, 3}));
  CHECK_THROWS_WITH_AS(mul(leaf, m),
                       "[aten::mul] Expected all tensors to be on the same device, but found at least two devices, cpu "
                       "and meta!",
                       Error);
}

TEST_CASE("an in-place op refuses outputs that repeat a location and inputs that partly overlap it") {
  const char* internal =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  const char* partial =
      "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
      "location. Please clone() the tensor before performing the operation.";
  const Tensor x = f32({3, 3});
  CHECK_THROWS_WITH_AS(add_(x, t(x)), (std::string("[aten::add_] ") + partial).c_str(), Error);
  const Tensor expanded = expand(f32({3, 1}), {3, 3});
  CHECK_THROWS_WITH_AS(add_(expanded, f32({3, 3})), (std::string("[aten::add_] ") + internal).c_str(), Error);
  CHECK_THROWS_WITH_AS(mul_(expanded, f32({3, 3})), (std::string("[aten::mul_] ") + internal).c_str(), Error);
  // Without elements nothing repeats, whatever the strides: PyTorch's has_internal_overlap answers No
  // for every non-overlapping-and-dense tensor, empty ones included.
  const Tensor empty_expanded = expand(f32({0, 1}), {0, 3});
  CHECK(add_(empty_expanded, f32({0, 3})).numel() == 0);
  CHECK_THROWS_WITH_AS(copy_(expanded, f32({3, 3})), (std::string("[aten::copy_] ") + internal).c_str(), Error);
  const Tensor y = tensor<float>({0, 1, 2, 3, 4, 5});
  CHECK_THROWS_WITH_AS(copy_(as_strided(y, {3}, {1}, 1), as_strided(y, {3}, {1}, 0)),
                       (std::string("[aten::copy_] ") + partial).c_str(), Error);
  // Disjoint parts of one storage, and an op reading exactly what it writes, are fine.
  copy_(as_strided(y, {3}, {1}, 0), as_strided(y, {3}, {1}, 3));
  CHECK(y.to_vector<float>() == std::vector<float>{3, 4, 5, 3, 4, 5});
  add_(y, y);
  CHECK(y.to_vector<float>() == std::vector<float>{6, 8, 10, 6, 8, 10});
}

TEST_CASE("record-function scopes: observers see each scope, and the exit op takes only a _RecordFunction") {
  struct Seen final : ops::RecordFunctionObserver {
    std::vector<std::string> events;
    void on_enter(const ops::RecordFunction& r) override { events.push_back("enter " + std::string(r.name())); }
    void on_exit(const ops::RecordFunction& r) override {
      events.push_back("exit " + std::string(r.name()) + (r.ended() && r.end() >= r.start() ? " ended" : ""));
    }
  } seen;
  ops::add_record_function_observer(&seen);
  {
    ops::RecordFunctionScope outer(std::string_view("outer"));
    ops::RecordFunctionScope inner(std::string_view("inner"));
    inner.exit();
  }
  ops::remove_record_function_observer(&seen);
  CHECK(seen.events == std::vector<std::string>{"enter outer", "enter inner", "exit inner ended", "exit outer ended"});

  struct Other final : CustomObject {
    std::string_view type_name() const override { return "__torch__.Other"; }
  };
  Stack stack;
  stack.emplace_back(IntrusivePtr<CustomObject>::reclaim(IntrusivePtr<Other>::make().release()));
  CHECK_THROWS_WITH_AS(ops::op("profiler::_record_function_exit", "_RecordFunction").call(stack),
                       doctest::Contains("expected a _RecordFunction handle but got __torch__.Other"), Error);
}

TEST_CASE("composites check their arguments in the words of the ops they mirror") {
  CHECK_THROWS_WITH_AS(softmax(i64({2, 3}), 1), "[aten::_softmax] \"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
                       Error);
  CHECK_THROWS_WITH_AS(value_selecting_reduction_backward(Tensor(), 1, tensor<std::int64_t>({0, 3}), {2, 3}, false),
                       "[aten::value_selecting_reduction_backward] Expected a proper Tensor but got None (or an undefined "
                       "Tensor in C++) for argument #0 'grad'",
                       Error);
  CHECK_THROWS_WITH_AS(dropout(f32({2}), 1.5, true), "[aten::dropout] dropout probability has to be between 0 and 1, but got 1.5",
                       Error);
  CHECK_THROWS_WITH_AS(dropout(f32({2}), -0.1, false),
                       "[aten::dropout] dropout probability has to be between 0 and 1, but got -0.1", Error);
  // The embedding's backward refuses sparse gradients, in PyTorch's not_implemented words.
  const Tensor w = zeros_like(strata::empty({5, 3}));
  requires_grad_(w);
  CHECK_THROWS_WITH_AS(backward(sum(embedding(w, tensor<std::int64_t>({1}), -1, false, true))),
                       "the derivative for 'embedding' is not implemented. strata has no sparse tensors, so "
                       "embedding(sparse=True) has no backward",
                       Error);
}

}  // namespace test_op_errors
