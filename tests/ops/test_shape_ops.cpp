// tests/ops/test_shape_ops.cpp: select, slice, narrow, cat and stack against PyTorch
// (tests/golden/shape_ops_torch.json, from scripts/reference/shape_ops_reference.py): geometry and
// values of the views, the joined values and dtypes, the gradients select_backward, slice_backward and
// CatBackward0 give, and the errors; the same calls on meta tensors agree with CPU.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_shape_ops {  // Note [Test files in unity builds]

using namespace strata;
using nlohmann::json;
using testing::sizes_of;
using testing::strides_of;

namespace {

ScalarType dtype_named(const std::string& name) {
  if (name == "float32") return ScalarType::Float32;
  if (name == "float64") return ScalarType::Float64;
  if (name == "int64") return ScalarType::Int64;
  REQUIRE(name == "bool");
  return ScalarType::Bool;
}

std::vector<std::int64_t> ints(const json& j) { return j.get<std::vector<std::int64_t>>(); }
std::optional<std::int64_t> opt_int(const json& j) { return j.is_null() ? std::nullopt : std::optional<std::int64_t>(j.get<std::int64_t>()); }

// The script's source tensor: arange over `shape`, or over the reversed shape with dims 0 and -1 swapped.
Tensor source(const std::vector<std::int64_t>& shape, bool transposed, Device device = Device::CPU) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  Tensor x = tensor<float>(values);
  if (device == Device::Meta) x = empty({n}, {.device = Device::Meta});
  if (!transposed) return view(x, shape);
  const std::vector<std::int64_t> reversed(shape.rbegin(), shape.rend());
  return transpose(view(x, reversed), 0, static_cast<std::int64_t>(shape.size()) - 1);
}

Tensor apply_view(const std::string& op, const Tensor& x, const json& a) {
  if (op == "select") return select(x, a[0].get<std::int64_t>(), a[1].get<std::int64_t>());
  if (op == "slice") return slice(x, a[0].get<std::int64_t>(), opt_int(a[1]), opt_int(a[2]), a[3].get<std::int64_t>());
  REQUIRE(op == "narrow");
  return narrow(x, a[0].get<std::int64_t>(), a[1].get<std::int64_t>(), a[2].get<std::int64_t>());
}

// Input k of a join case: 100 * k + arange in its dtype, or alternating true/false for bool.
std::vector<Tensor> join_inputs(const json& inputs, Device device = Device::CPU) {
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<std::int64_t> shape = ints(inputs[k]["shape"]);
    const ScalarType dtype = dtype_named(inputs[k]["dtype"]);
    if (device == Device::Meta) {
      out.push_back(empty(shape, {.dtype = dtype, .device = Device::Meta}));
      continue;
    }
    std::int64_t n = 1;
    for (std::int64_t s : shape) n *= s;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = dtype == ScalarType::Bool ? double(i % 2 == 0) : 100.0 * static_cast<double>(k) + static_cast<double>(i);
    out.push_back(to(tensor<double>(v, shape), dtype));
  }
  return out;
}

Tensor apply_join(const std::string& op, TensorList xs, std::int64_t dim) {
  if (op == "cat") return cat(xs, dim);
  REQUIRE(op == "stack");
  return stack(xs, dim);
}

// (out * w).sum() with w = 1, 2, ... of out's shape, as the script's backward.
void backward_weighted(const Tensor& out) {
  std::vector<double> w(static_cast<std::size_t>(out.numel()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i + 1);
  backward(sum(mul(out, to(tensor<double>(w, out.sizes()), out.dtype()))));
}

std::vector<double> flat(const Tensor& t) { return contiguous(t).to_vector<double>(); }

// Runs check(case, op) on each case of one section of shape_ops_torch.json, the case printed when a
// check on it fails.
template <typename Check>
void for_each_case(const char* section, const Check& check) {
  const json golden = testing::read_golden_json("shape_ops_torch.json");
  for (const json& c : golden[section]) {
    INFO(c.dump());
    check(c, c["op"].get<std::string>());
  }
}

}  // namespace

TEST_CASE("select, slice and narrow: PyTorch's geometry, values and gradients") {
  for_each_case("views", [](const json& c, const std::string& op) {
    const Tensor leaf = source(ints(c["shape"]), c["transposed"]);
    CHECK(strides_of(leaf) == ints(c["source_strides"]));
    const Tensor x = detach(leaf);
    requires_grad_(x);
    const Tensor v = apply_view(op, x, c["args"]);
    CHECK(sizes_of(v) == ints(c["sizes"]));
    CHECK(strides_of(v) == ints(c["strides"]));
    CHECK(v.storage_offset() == c["storage_offset"].get<std::int64_t>());
    CHECK(v.impl()->storage().get() == x.impl()->storage().get());
    CHECK(flat(v) == c["values"].get<std::vector<double>>());
    backward_weighted(v);
    REQUIRE(x.grad().defined());
    CHECK(flat(x.grad()) == c["grad"].get<std::vector<double>>());
    // The meta function gives the CPU geometry.
    const Tensor m = apply_view(op, source(ints(c["shape"]), c["transposed"], Device::Meta), c["args"]);
    CHECK(m.is_meta());
    CHECK(sizes_of(m) == ints(c["sizes"]));
    CHECK(strides_of(m) == ints(c["strides"]));
    CHECK(m.storage_offset() == c["storage_offset"].get<std::int64_t>());
  });
  // The backward ops themselves, on CPU and meta.
  const Tensor g = tensor<float>({1, 2, 3});
  CHECK(select_backward(g, {2, 3}, 0, -1).to_vector<float>() == std::vector<float>{0, 0, 0, 1, 2, 3});
  CHECK(slice_backward(g, {7}, 0, 1, 100, 2).to_vector<float>() == std::vector<float>{0, 1, 0, 2, 0, 3, 0});
  CHECK(sizes_of(slice_backward(empty({3}, {.device = Device::Meta}), {7}, 0, 1, 100, 2)) == std::vector<std::int64_t>{7});
  CHECK(select_backward(g, {3, 2}, 1, 0).to_vector<float>() == std::vector<float>{1, 0, 2, 0, 3, 0});
}

TEST_CASE("cat and stack: PyTorch's sizes, dtypes, values and gradients") {
  for_each_case("joins", [](const json& c, const std::string& op) {
    const std::int64_t dim = c["dim"];
    std::vector<Tensor> xs = join_inputs(c["inputs"]);
    for (Tensor& x : xs)
      if (is_floating_point(x.dtype())) requires_grad_(x);
    const Tensor y = apply_join(op, xs, dim);
    CHECK(sizes_of(y) == ints(c["sizes"]));
    CHECK(y.dtype() == dtype_named(c["dtype"]));
    CHECK(y.is_contiguous());
    CHECK(y.to_vector<double>() == c["values"].get<std::vector<double>>());
    if (c.contains("grads")) {
      backward_weighted(y);
      for (std::size_t k = 0; k < xs.size(); ++k) {
        if (c["grads"][k].is_null()) continue;
        REQUIRE(xs[k].grad().defined());
        CHECK(xs[k].grad().dtype() == xs[k].dtype());
        CHECK(flat(xs[k].grad()) == c["grads"][k].get<std::vector<double>>());
      }
    }
    const Tensor m = apply_join(op, join_inputs(c["inputs"], Device::Meta), dim);
    CHECK(m.is_meta());
    CHECK(sizes_of(m) == ints(c["sizes"]));
    CHECK(m.dtype() == dtype_named(c["dtype"]));
  });
  // A braced list, non-contiguous inputs, and the node's name.
  const Tensor a = tensor<float>({1, 2, 3, 4}, {2, 2});
  CHECK(cat({t(a), a}, 1).to_vector<float>() == std::vector<float>{1, 3, 1, 2, 2, 4, 3, 4});
  CHECK(stack({a, t(a)}, 2).to_vector<float>() == std::vector<float>{1, 1, 2, 3, 3, 2, 4, 4});
  const Tensor x = tensor<float>({1, 2});
  requires_grad_(x);
  const Tensor y = cat({x, tensor<float>({3})});
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "CatBackward0");
  CHECK(stack({x, x}).grad_fn()->name() == "StackBackward0");
  // Only the inputs that require grad get one; a float64 input keeps its dtype's gradient.
  const Tensor w = tensor<double>({5, 6});
  requires_grad_(w);
  backward(sum(mul(stack({tensor<float>({1, 1}), w}, 1), tensor<float>({1, 2, 3, 4}, {2, 2}))));
  CHECK(w.grad().to_vector<double>() == std::vector<double>{2, 4});
  CHECK(select(x, 0, 1).grad_fn()->name() == "SelectBackward0");
  CHECK(slice(x, 0, 1).grad_fn()->name() == "SliceBackward0");
  CHECK(narrow(x, 0, 1, 1).grad_fn()->name() == "SliceBackward0");
}

TEST_CASE("select, slice, cat and stack give PyTorch's errors") {
  for_each_case("errors", [](const json& c, const std::string& op) {
    const std::string expected = c["message"];
    try {
      if (c.contains("shape")) {
        apply_view(op, zeros_like(strata::empty(ints(c["shape"]))), c["args"]);
      } else {
        std::vector<Tensor> xs;
        for (const json& s : c["shapes"]) xs.push_back(zeros_like(strata::empty(ints(s))));
        apply_join(op, xs, c["dim"]);
      }
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == "[aten::" + op + "] " + expected);
    }
  });
}

TEST_CASE("narrow and undefined inputs: PyTorch 2.8's errors") {
  // 2.8's narrow_symint wording (1.13 words the start check as a dimension error).
  const Tensor x = zeros_like(empty({3}));
  CHECK_THROWS_WITH_AS(narrow(x, 0, 4, 0), "[aten::narrow] start out of range (expected to be in range of [-3, 3], but got 4)", Error);
  CHECK_THROWS_WITH_AS(narrow(x, 0, -4, 1), "[aten::narrow] start out of range (expected to be in range of [-3, 3], but got -4)", Error);
  CHECK_THROWS_WITH_AS(narrow(x, 0, 2, 2), "[aten::narrow] start (2) + length (2) exceeds dimension size (3).", Error);
  CHECK_THROWS_WITH_AS(narrow(x, 0, -1, 2), "[aten::narrow] start (2) + length (2) exceeds dimension size (3).", Error);
  CHECK_THROWS_WITH_AS(narrow(x, 0, 0, -1), "[aten::narrow] narrow(): length must be non-negative.", Error);
  CHECK_THROWS_WITH_AS(narrow(x, 1, 0, 1), "[aten::narrow] Dimension out of range (expected to be in range of [-1, 0], but got 1)", Error);
  CHECK_THROWS_WITH_AS(narrow(scalar_tensor(1.0, ScalarType::Float32), 0, 0, 1),
                       "[aten::narrow] narrow() cannot be applied to a 0-dim tensor.", Error);
  CHECK(narrow(x, 0, 3, 0).numel() == 0);
  CHECK(narrow(x, 0, -3, 3).storage_offset() == 0);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK_THROWS_AS(narrow(x, 0, 1, big), Error);  // start + length would overflow: refused by the size check
  CHECK_THROWS_WITH_AS(narrow(Tensor(), 0, 0, 1),
                       "[aten::narrow] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'", Error);
  CHECK_THROWS_WITH_AS(cat({x, Tensor()}),
                       "[aten::cat] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'tensors'", Error);
  CHECK_THROWS_WITH_AS(stack({x, Tensor()}),
                       "[aten::stack] Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'tensors'", Error);
  // Huge starts, ends and steps clamp instead of overflowing.
  CHECK(slice(x, 0, std::numeric_limits<std::int64_t>::min(), big, big).to_vector<float>() == std::vector<float>{0});
  CHECK(slice(x, 0, big, std::numeric_limits<std::int64_t>::min(), 1).numel() == 0);
  CHECK(select(x, 0, -3).storage_offset() == 0);
  // Mixing CPU and meta tensors in one list is refused.
  CHECK_THROWS_AS(cat({x, empty({3}, {.device = Device::Meta})}), Error);
  CHECK_THROWS_WITH_AS(select_backward(x, {2, 2}, 0, 0),
                       "[aten::select_backward] The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                       "dimension 0",
                       Error);
}

TEST_CASE("select, slice and narrow are views: writes reach the base, versions are shared, autograd follows") {
  const Tensor base = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = select(base, 0, 1);
  const Tensor col = slice(base, 1, 1, 3);
  const Tensor part = narrow(base, 1, 0, 2);
  const std::uint32_t before = base.impl()->version();
  fill_(row, 0.0);
  CHECK(base.to_vector<float>() == std::vector<float>{1, 2, 3, 0, 0, 0});
  CHECK(base.impl()->version() == before + 1);
  CHECK(col.impl()->version() == base.impl()->version());
  mul_(col, tensor<float>({10}));
  CHECK(base.to_vector<float>() == std::vector<float>{1, 20, 30, 0, 0, 0});
  CHECK(part.to_vector<float>() == std::vector<float>{1, 20, 0, 0});
  CHECK(part.impl()->version() == before + 2);
  // An in-place op through a view of a non-leaf rebases the base's history (CopySlices), as PyTorch:
  // y = x * 1; y[1].mul_(w); y[:, 0].sum() + y.sum(), gradients by hand.
  const Tensor x = tensor<double>({1, 2, 3, 4}, {2, 2});
  const Tensor w = tensor<double>({5, 7});
  requires_grad_(x);
  requires_grad_(w);
  const Tensor y = mul(x, Scalar(1.0));
  mul_(select(y, 0, 1), w);
  backward(add(sum(slice(y, 1, 0, 1)), sum(narrow(y, 0, 0, 2))));
  // dy/dx: row 0 passes 1 (+1 for column 0), row 1 is scaled by w: (1 + [1, 0]) * [5, 7].
  CHECK(x.grad().to_vector<double>() == std::vector<double>{2, 1, 10, 7});
  CHECK(w.grad().to_vector<double>() == std::vector<double>{3 * 2, 4});
  // A view of a leaf that requires grad may not be written in place.
  CHECK_THROWS_AS(fill_(select(x, 0, 0), 1.0), Error);
}

}  // namespace test_shape_ops
