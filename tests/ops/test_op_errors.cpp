// tests/ops/test_op_errors.cpp: every op's errors for bad shapes, dtypes and arguments. Messages use
// PyTorch's wording where PyTorch has one; the dispatcher prefixes the op's name.
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

using namespace strata;

namespace {
Tensor f32(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes)); }
Tensor f64(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes, {.dtype = ScalarType::Float64})); }
Tensor i64(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes, {.dtype = ScalarType::Int64})); }
Tensor b8(std::initializer_list<std::int64_t> sizes) { return zeros_like(strata::empty(sizes, {.dtype = ScalarType::Bool})); }
}  // namespace

TEST_CASE("matrix product errors") {
  CHECK_THROWS_WITH_AS(mm(f32({8, 16}), f32({32, 4})), "[aten::mm] mat1 and mat2 shapes cannot be multiplied (8x16 and 32x4)", Error);
  CHECK_THROWS_WITH_AS(mm(f32({3}), f32({3, 4})), "[aten::mm] self must be a matrix", Error);
  CHECK_THROWS_WITH_AS(mm(f32({3, 4}), f32({4})), "[aten::mm] mat2 must be a matrix", Error);
  CHECK_THROWS_WITH_AS(mm(f32({2, 3}), f64({3, 4})), "[aten::mm] expected mat1 and mat2 to have the same dtype, but got: float32 != float64", Error);
  CHECK_THROWS_WITH_AS(mm(b8({2, 3}), b8({3, 4})), "[aten::mm] \"addmm_impl_cpu_\" not implemented for 'Bool'", Error);
  CHECK_THROWS_WITH_AS(addmm(f32({4}), f32({8, 16}), f32({32, 4})),
                       "[aten::addmm] mat1 and mat2 shapes cannot be multiplied (8x16 and 32x4)", Error);
  CHECK_THROWS_WITH_AS(addmm(f32({4}), f32({16}), f32({16, 4})), "[aten::addmm] mat1 must be a matrix, got 1-D tensor", Error);
  CHECK_THROWS_WITH_AS(addmm(f32({4}), f32({8, 16}), f32({16})), "[aten::addmm] mat2 must be a matrix, got 1-D tensor", Error);
  CHECK_THROWS_WITH_AS(addmm(f64({4}), f32({8, 16}), f32({16, 4})),
                       "[aten::addmm] self and mat2 must have the same dtype, but got float64 and float32", Error);
  CHECK_THROWS_WITH_AS(addmm(f32({4}), f64({8, 16}), f32({16, 4})),
                       "[aten::addmm] mat1 and mat2 must have the same dtype, but got float64 and float32", Error);
  CHECK_THROWS_WITH_AS(addmm(f32({3}), f32({8, 16}), f32({16, 4})),
                       "[aten::addmm] The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
                       "dimension 1.  Target sizes: [8, 4].  Tensor sizes: [3]",
                       Error);
}

TEST_CASE("pointwise errors") {
  CHECK_THROWS_WITH_AS(add(f32({2, 3}), f32({4})),
                       "[aten::add] The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", Error);
  CHECK_THROWS_WITH_AS(add(i64({2}), i64({2}), 0.5),
                       "[aten::add] For integral input tensors, argument alpha must not be a floating point number.", Error);
  CHECK_THROWS_WITH_AS(add(f32({2}), f32({2}), true), "[aten::add] Boolean alpha only supported for Boolean results.", Error);
  CHECK_THROWS_WITH_AS(add_(f32({3}), f32({2, 3})), "[aten::add_] output with shape [3] doesn't match the broadcast shape [2, 3]", Error);
  CHECK_THROWS_WITH_AS(add_(i64({3}), f32({3})), "[aten::add_] result type float32 can't be cast to the desired output type int64", Error);
  CHECK_THROWS_WITH_AS(mul_(b8({3}), i64({3})), "[aten::mul_] result type int64 can't be cast to the desired output type bool", Error);
  CHECK_THROWS_WITH_AS(sub(b8({2}), b8({2})),
                       "[aten::sub] Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                       "`logical_xor()` operator instead.",
                       Error);
  CHECK_THROWS_WITH_AS(sub(f32({2}), b8({2})),
                       "[aten::sub] Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                       "invert a mask, use the `~` or `logical_not()` operator instead.",
                       Error);
  CHECK_THROWS_WITH_AS(neg(b8({2})),
                       "[aten::neg] Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                       "invert a mask, use the `~` or `logical_not()` operator instead.",
                       Error);
  CHECK_THROWS_WITH_AS(relu(b8({2})), "[aten::relu] Boolean inputs not supported for relu", Error);
  CHECK_THROWS_WITH_AS(threshold_backward(f32({2}), f32({3}), 0),
                       "[aten::threshold_backward] The size of tensor a (2) must match the size of tensor b (3) at "
                       "non-singleton dimension 0",
                       Error);
}

TEST_CASE("view op errors") {
  CHECK_THROWS_WITH_AS(view(f32({4, 4}), {3, 5}), "[aten::view] shape '[3, 5]' is invalid for input of size 16", Error);
  CHECK_THROWS_WITH_AS(view(f32({4, 4}), {-1, -1}), "[aten::view] only one dimension can be inferred", Error);
  CHECK_THROWS_WITH_AS(view(f32({4, 4}), {-2, 8}), "[aten::view] invalid shape dimension -2", Error);
  CHECK_THROWS_WITH_AS(view(t(f32({4, 3})), {12}),
                       "[aten::view] view size is not compatible with input tensor's size and stride (at least one dimension "
                       "spans across two contiguous subspaces). Use .reshape(...) instead.",
                       Error);
  CHECK_THROWS_WITH_AS(view(f32({0, 4}), {-1, 0}),
                       "[aten::view] cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
                       "dimension size -1 can be any value and is ambiguous",
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({2, 3}), {3}),
                       "[aten::expand] expand(tensor of shape [2, 3], size=[3]): the number of sizes provided (1) must be "
                       "greater or equal to the number of dimensions in the tensor (2)",
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({3, 2}), {3, 4}),
                       "[aten::expand] The expanded size of the tensor (4) must match the existing size (2) at "
                       "non-singleton dimension 1.  Target sizes: [3, 4].  Tensor sizes: [3, 2]",
                       Error);
  CHECK_THROWS_WITH_AS(expand(f32({3}), {-1, 3}),
                       "[aten::expand] The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                       "dimension 0",
                       Error);
  CHECK_THROWS_WITH_AS(t(f32({2, 3, 4})), "[aten::t] t() expects a tensor with <= 2 dimensions, but self is 3D", Error);
  CHECK_THROWS_WITH_AS(transpose(f32({2, 3}), 0, 2),
                       "[aten::transpose] Dimension out of range (expected to be in range of [-2, 1], but got 2)", Error);
  CHECK_THROWS_WITH_AS(unsqueeze(f32({2, 3}), 4),
                       "[aten::unsqueeze] Dimension out of range (expected to be in range of [-3, 2], but got 4)", Error);
  CHECK_THROWS_WITH_AS(as_strided(f32({4}), {2, 2}, {1}), "[aten::as_strided] mismatch in length of strides and shape", Error);
  CHECK_THROWS_WITH_AS(as_strided(f32({4}), {2}, {-1}),
                       "[aten::as_strided] as_strided: Negative strides are not supported at the moment, got strides: [-1]", Error);
  CHECK_THROWS_WITH_AS(as_strided(f32({4}), {4, 4}, {1, 2}),
                       "[aten::as_strided] setStorage: sizes [4, 4], strides [1, 2], storage offset 0, and itemsize 4 "
                       "requiring a storage size of 40 are out of bounds for storage of size 16",
                       Error);
}

TEST_CASE("reduction, softmax and loss errors") {
  CHECK_THROWS_WITH_AS(sum(f32({2, 3}), {2}), "[aten::sum] Dimension out of range (expected to be in range of [-2, 1], but got 2)", Error);
  CHECK_THROWS_WITH_AS(sum(f32({2, 3}), {0, -2}), "[aten::sum] dim 0 appears multiple times in the list of dims", Error);
  CHECK_THROWS_WITH_AS(sum(scalar_tensor(2.0, ScalarType::Float32), {0, -1}), "[aten::sum] dim 0 appears multiple times in the list of dims", Error);
  CHECK_THROWS_WITH_AS(_log_softmax(i64({2, 3}), 1),
                       "[aten::_log_softmax] \"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'", Error);
  CHECK_THROWS_WITH_AS(_log_softmax(f32({2, 3}), 2),
                       "[aten::_log_softmax] Dimension out of range (expected to be in range of [-2, 1], but got 2)", Error);
  CHECK_THROWS_WITH_AS(_log_softmax(f32({2, 3}), 1, true),
                       "[aten::_log_softmax] conversion from half to float is only supported on CUDA (half_to_float=True)", Error);
  CHECK_THROWS_WITH_AS(_log_softmax_backward_data(f32({2, 3}), f32({3, 2}), 1, ScalarType::Float32),
                       "[aten::_log_softmax_backward_data] grad_output and output must have the same shape, but got [2, 3] and [3, 2]",
                       Error);
  const Tensor target = i64({8});
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4, 2}), target, Tensor(), 1, -100),
                       "[aten::nll_loss_forward] input tensor should be 1D or 2D", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), i64({8, 1}), Tensor(), 1, -100),
                       "[aten::nll_loss_forward] 0D or 1D target tensor expected, multi-target not supported", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), i64({7}), Tensor(), 1, -100),
                       "[aten::nll_loss_forward] size mismatch (got input: [8, 4], target: [7])", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), scalar_tensor(1, ScalarType::Int64), Tensor(), 1, -100),
                       "[aten::nll_loss_forward] size mismatch (got input: [8, 4], target: [])", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), f32({8}), Tensor(), 1, -100),
                       "[aten::nll_loss_forward] expected scalar type int64 but found float32", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), target, f64({4}), 1, -100),
                       "[aten::nll_loss_forward] expected scalar type float32 but found float64", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), target, f32({3}), 1, -100),
                       "[aten::nll_loss_forward] weight tensor should be defined either for all 4 classes or no classes but "
                       "got weight tensor of shape: [3]",
                       Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({8, 4}), target, Tensor(), 3, -100),
                       "[aten::nll_loss_forward] reduction must be 0 (none), 1 (mean) or 2 (sum), but got 3", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({2, 4}), tensor<std::int64_t>({1, 5}), Tensor(), 1, -100),
                       "[aten::nll_loss_forward] Target 5 is out of bounds.", Error);
  CHECK_THROWS_WITH_AS(nll_loss_forward(f32({2, 4}), tensor<std::int64_t>({-1, 0}), Tensor(), 0, -100),
                       "[aten::nll_loss_forward] Target -1 is out of bounds.", Error);
  CHECK_THROWS_WITH_AS(nll_loss_backward(f32({}), f32({8, 4}), target, Tensor(), 1, -100, f32({2})),
                       "[aten::nll_loss_backward] expected total_weight to be a single element tensor, got: [2] (2 elements)", Error);
  CHECK_THROWS_WITH_AS(nll_loss_backward(f32({4}), f32({8, 4}), target, Tensor(), 0, -100, f32({})),
                       "[aten::nll_loss_backward] Expected a tensor of dimension 1 and tensor.size[0] == 8 but got: dimension "
                       "1 and tensor.size[0] == 4",
                       Error);
  CHECK_THROWS_WITH_AS(nll_loss_backward(f32({2}), f32({8, 4}), target, Tensor(), 1, -100, f32({})),
                       "[aten::nll_loss_backward] Expected a single element grad_output tensor, but got: [2]", Error);
}

TEST_CASE("factory, copy and random errors") {
  CHECK_THROWS_WITH_AS(empty({2, -3}), "[aten::empty] Trying to create tensor with negative dimension -3: [2, -3]", Error);
  CHECK_THROWS_WITH_AS(randn({2}, {.dtype = ScalarType::Int64}), "[aten::randn] \"normal_kernel_cpu\" not implemented for 'Long'", Error);
  CHECK_THROWS_WITH_AS(randint(3, 3, {2}), "[aten::randint] random_ expects 'from' to be less than 'to', but got from=3 >= to=3", Error);
  CHECK_THROWS_WITH_AS(normal_(f32({2}), 0, -1), "[aten::normal_] normal expects std >= 0.0, but found std -1", Error);
  CHECK_THROWS_WITH_AS(uniform_(f32({2}), 1, 0), "[aten::uniform_] uniform_ expects to return a [from, to) range, but found from=1 > to=0", Error);
  CHECK_THROWS_WITH_AS(uniform_(f32({2}), -INFINITY, 0), "[aten::uniform_] from is out of bounds for float32", Error);
  CHECK_THROWS_WITH_AS(uniform_(f32({2}), 0, NAN), "[aten::uniform_] to is out of bounds for float32", Error);
  CHECK_THROWS_WITH_AS(uniform_(f32({2}), 0, 1e39), "[aten::uniform_] to is out of bounds for float32", Error);
  CHECK_THROWS_WITH_AS(uniform_(f32({2}), -3e38, 3e38),
                       "[aten::uniform_] uniform_ expects to-from <= std::numeric_limits<float32>::max(), but found "
                       "to=3e+38 and from=-3e+38 which result in to-from to exceed the limit",
                       Error);
  CHECK(uniform_(f64({2}), -3e38, 3e38).defined());  // float64 can hold that width
  CHECK_THROWS_WITH_AS(uniform_(i64({2})), "[aten::uniform_] \"uniform_kernel_cpu\" not implemented for 'Long'", Error);
  CHECK_THROWS_WITH_AS(copy_(f32({3}), f32({2, 3})),
                       "[aten::copy_] expand(tensor of shape [2, 3], size=[3]): the number of sizes provided (1) must be "
                       "greater or equal to the number of dimensions in the tensor (2)",
                       Error);
  CHECK_THROWS_WITH_AS(new_empty_strided(f32({2}), {2, 2}, {1}), "[aten::new_empty_strided] mismatch in length of strides and shape", Error);
  CHECK_THROWS_WITH_AS(ones_like(f32({2}), {.device = Device::Meta}),
                       "[aten::ones_like] creating a meta tensor like a cpu tensor is not supported; create it with "
                       "empty(..., device=meta) instead",
                       Error);
}

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
  // An optional tensor may be absent.
  CHECK(std::get<0>(nll_loss_forward(f32({2, 3}), i64({2}), Tensor(), 1, -100)).defined());
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
  CHECK_THROWS_WITH_AS(mm(f32({3, 2}), m),
                       "[aten::mm] Expected all tensors to be on the same device, but found at least two devices, cpu and meta!",
                       Error);
  const Tensor r = mul(m, scalar_tensor(2.0, ScalarType::Float32));
  CHECK(r.device() == Device::Meta);
  CHECK(copy_(strata::empty({2, 3}, {.device = Device::Meta}), f32({2, 3})).device() == Device::Meta);
  CHECK_THROWS_WITH_AS(copy_(f32({2, 3}), m), "[aten::copy_] Cannot copy out of meta tensor; no data!", Error);
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

TEST_CASE("activation, softmax, max, embedding and dropout errors") {
  CHECK_THROWS_WITH_AS(gelu(i64({2})), "[aten::gelu] \"GeluKernelImpl\" not implemented for 'Long'", Error);
  CHECK_THROWS_WITH_AS(gelu(f32({2}), "erf"), "[aten::gelu] approximate argument must be either none or tanh.", Error);
  CHECK_THROWS_WITH_AS(gelu_backward(f32({2}), f32({2}), "erf"),
                       "[aten::gelu_backward] approximate argument must be either none or tanh.", Error);
  CHECK_THROWS_WITH_AS(gelu_backward(i64({2}), i64({2})),
                       "[aten::gelu_backward] \"GeluBackwardKernelImpl\" not implemented for 'Long'", Error);
  CHECK_THROWS_WITH_AS(sigmoid_backward(f32({2, 3}), f32({3, 2})),
                       "[aten::sigmoid_backward] The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
                       "dimension 1",
                       Error);
  CHECK_THROWS_WITH_AS(tanh_backward(i64({2}), b8({2})), "[aten::tanh_backward] \"tanh_backward_cpu\" not implemented for 'Long'",
                       Error);
  CHECK_THROWS_WITH_AS(_softmax(i64({2, 3}), 1), "[aten::_softmax] \"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
                       Error);
  CHECK_THROWS_WITH_AS(softmax(i64({2, 3}), 1), "[aten::_softmax] \"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
                       Error);
  CHECK_THROWS_WITH_AS(_softmax(f32({2, 3}), -3),
                       "[aten::_softmax] Dimension out of range (expected to be in range of [-2, 1], but got -3)", Error);
  CHECK_THROWS_WITH_AS(_softmax(f32({2, 3}), 1, true),
                       "[aten::_softmax] softmax with half to float conversion is not supported on CPU", Error);
  CHECK_THROWS_WITH_AS(_softmax_backward_data(f32({2, 3}), f32({3, 2}), 1, ScalarType::Float32),
                       "[aten::_softmax_backward_data] Expected tensor for argument #1 'grad' to have same size as tensor for "
                       "argument #2 'output'; but [2, 3] does not equal [3, 2] (while checking arguments for softmax_backward)",
                       Error);
  CHECK_THROWS_WITH_AS(mean(i64({2})),
                       "[aten::mean] mean(): could not infer output dtype. Input dtype must be either a floating point or "
                       "complex dtype. Got: int64",
                       Error);
  CHECK_THROWS_WITH_AS(mean(f32({2}), {0}, false, ScalarType::Int64),
                       "[aten::mean] mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                       "complex dtype. Got: int64",
                       Error);
  CHECK_THROWS_WITH_AS(mean(f32({2, 3}), {2}), "[aten::mean] Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                       Error);
  CHECK_THROWS_WITH_AS(max(f32({0, 3})),
                       "[aten::max] max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                       "dim with the 'dim' argument.",
                       Error);
  CHECK_THROWS_WITH_AS(max(f32({0, 3}), 0), "[aten::max] max(): Expected reduction dim 0 to have non-zero size.", Error);
  CHECK_THROWS_WITH_AS(max(f32({2, 3}), 2), "[aten::max] Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                       Error);
  CHECK_THROWS_WITH_AS(argmax(f32({0})), "[aten::argmax] argmax(): Expected reduction dim to be specified for input.numel() == 0.",
                       Error);
  CHECK_THROWS_WITH_AS(argmax(f32({0, 3}), 0), "[aten::argmax] argmax(): Expected reduction dim 0 to have non-zero size.", Error);
  CHECK_THROWS_WITH_AS(argmax(b8({2})), "[aten::argmax] \"argmax_cpu\" not implemented for 'Bool'", Error);
  // max.dim's backward is a composite: its errors are the scatter's.
  CHECK_THROWS_WITH_AS(value_selecting_reduction_backward(f32({2}), 1, f32({2}), {2, 3}, false),
                       "[aten::scatter] scatter(): Expected dtype int64 for index", Error);
  CHECK_THROWS_WITH_AS(value_selecting_reduction_backward(f32({2}), 1, tensor<std::int64_t>({0, 3}), {2, 3}, false),
                       "[aten::scatter] index 3 is out of bounds for dimension 1 with size 3", Error);
  CHECK_THROWS_WITH_AS(value_selecting_reduction_backward(Tensor(), 1, tensor<std::int64_t>({0, 3}), {2, 3}, false),
                       "[aten::value_selecting_reduction_backward] Expected a proper Tensor but got None (or an undefined "
                       "Tensor in C++) for argument #0 'grad'",
                       Error);
  CHECK_THROWS_WITH_AS(eq(f32({2}), f32({3})),
                       "[aten::eq] The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0", Error);
  const Tensor weight = f32({5, 3});
  CHECK_THROWS_WITH_AS(embedding(weight, tensor<std::int64_t>({1, 5})), "[aten::embedding] index out of range in self", Error);
  CHECK_THROWS_WITH_AS(embedding(weight, tensor<std::int64_t>({-1})), "[aten::embedding] index out of range in self", Error);
  CHECK_THROWS_WITH_AS(embedding(f32({5}), tensor<std::int64_t>({1})), "[aten::embedding] 'weight' must be 2-D", Error);
  CHECK_THROWS_WITH_AS(embedding(weight, f32({2})),
                       "[aten::embedding] Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                       "int64; but got float32 instead (while checking arguments for embedding)",
                       Error);
  CHECK_THROWS_WITH_AS(embedding_dense_backward(f32({2, 3}), tensor<std::int64_t>({1, 7}), 5, -1, false),
                       "[aten::embedding_dense_backward] index out of range in self", Error);
  CHECK_THROWS_WITH_AS(embedding_dense_backward(f32({2, 3}), tensor<std::int64_t>({1, 2, 3}), 5, -1, false),
                       "[aten::embedding_dense_backward] shape '[3, 3]' is invalid for input of size 6", Error);
  CHECK_THROWS_WITH_AS(embedding_dense_backward(f32({2, 3}), tensor<std::int64_t>({1, 2}), -1, -1, false),
                       "[aten::embedding_dense_backward] Trying to create tensor with negative dimension -1: [-1, 3]", Error);
  CHECK_THROWS_WITH_AS(dropout(f32({2}), 1.5, true), "[aten::dropout] dropout probability has to be between 0 and 1, but got 1.5",
                       Error);
  CHECK_THROWS_WITH_AS(dropout(f32({2}), -0.1, false),
                       "[aten::dropout] dropout probability has to be between 0 and 1, but got -0.1", Error);
  CHECK_THROWS_WITH_AS(native_dropout(f32({2}), 1.5, true),
                       "[aten::native_dropout] bernoulli_ expects p to be in [0, 1], but got p=-0.5", Error);
  CHECK_THROWS_WITH_AS(native_dropout(i64({2}), 0.5, true),
                       "[aten::native_dropout] result type float32 can't be cast to the desired output type int64", Error);
  // The embedding's backward refuses sparse gradients, in PyTorch's not_implemented words.
  const Tensor w = zeros_like(strata::empty({5, 3}));
  requires_grad_(w);
  CHECK_THROWS_WITH_AS(backward(sum(embedding(w, tensor<std::int64_t>({1}), -1, false, true))),
                       "the derivative for 'embedding' is not implemented. strata has no sparse tensors, so "
                       "embedding(sparse=True) has no backward",
                       Error);
}
