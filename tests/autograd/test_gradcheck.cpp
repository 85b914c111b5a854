// tests/autograd/test_gradcheck.cpp: gradcheck and gradgradcheck themselves (what they report, what
// they refuse), the derivative table's coverage (every op has a row; every differentiable op is
// gradchecked by its record, tests/ops/op_records.h), and the derivatives of composites.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "autograd/backward.h"
#include "autograd/derivative_table.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "ops/composite_op.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/ops/op_records.h"

namespace test_gradcheck {  // Note [Test files in unity builds]

using namespace strata;
using autograd::gradcheck;

namespace {
// A float64 leaf of `sizes` that requires grad.
Tensor input(std::initializer_list<std::int64_t> sizes) { return requires_grad_(randn(sizes, {.dtype = ScalarType::Float64})); }
}  // namespace

// dropout on CPU is input * noise (Note [dropout on CPU is bernoulli noise]): the same seed at every
// evaluation, so the noise is a constant.
TEST_CASE("dropout's output passes gradcheck and gradgradcheck") {
  manual_seed(11);
  const auto fn = [](const std::vector<Tensor>& x) {
    manual_seed(4);
    return dropout(x[0], 0.3, true);
  };
  const autograd::GradcheckResult first = gradcheck(fn, {input({4, 5})});
  CHECK_MESSAGE(first.ok, first.message);
  const autograd::GradcheckResult second = autograd::gradgradcheck(fn, {input({4, 5})});
  CHECK_MESSAGE(second.ok, second.message);
}

TEST_CASE("every op but a composite has a derivative row, and every differentiable op is gradchecked by its record") {
  autograd::register_autograd();
  std::set<std::string> gradchecked;
  for (const testing::OpRecord& r : testing::op_records())
    if (r.grad.value_or(true))
      for (const testing::RecordSample& s : r.samples)
        if (s.grad && std::find(s.dtypes.begin(), s.dtypes.end(), "float64") != s.dtypes.end()) gradchecked.insert(r.op);
  for (const OperatorHandle& op : Dispatcher::singleton().ops()) {
    if (op.name().ns != "aten" && op.name().ns != "profiler") continue;
    const autograd::ResolvedRow* row = autograd::derivative_table().find(op);
    const std::string name = op.name().qualified() + (op.name().overload.empty() ? "" : "." + op.name().overload);
    INFO(name);
    // A composite op has no row: autograd records the ops it decomposes into (Note [A composite op
    // decomposes at Autograd]). Its record still gradchecks it through them.
    if (ops::is_composite(op)) {
      CHECK(row == nullptr);
      CHECK_MESSAGE(gradchecked.count(name) == 1, "its record has no float64 sample that gradchecks it (tests/ops/op_records.h)");
      continue;
    }
    REQUIRE(row != nullptr);  // every other op has a row: a formula, non-differentiable, or not implemented
    // Random in-place ops have formulas (zeros) but random outputs (checked below); a NotImplemented
    // node's backward fails by design.
    const bool random = name == "aten::normal_" || name == "aten::uniform_" || name == "aten::bernoulli_.float";
    if (row->kind == autograd::Differentiability::NonDifferentiable || random || row->row->node_name == "NotImplemented")
      continue;
    CHECK_MESSAGE(gradchecked.count(name) == 1, "its record has no float64 sample that gradchecks it (tests/ops/op_records.h)");
  }
}

TEST_CASE("every Formula row records no more than a node keeps inline") {
  autograd::register_autograd();
  for (const autograd::ResolvedRow* row : autograd::derivative_table().rows()) {
    if (row->kind != autograd::Differentiability::Formula) continue;  // only Formula rows make nodes
    INFO(row->row->node_name);
    CHECK(row->recorded_args.size() <= autograd::kInlineRecordedArgs);
    CHECK(row->geometry_args.size() <= autograd::kInlineRecordedGeometry);
    CHECK(row->saved_args.size() <= autograd::kInlineSavedVariables);
  }
}

TEST_CASE("a row saves outputs after the call only when it names one") {
  autograd::register_autograd();
  const autograd::ResolvedRow* relu_row = autograd::derivative_table().find(ops::op("aten::relu"));  // saves "result"
  const autograd::ResolvedRow* mul_row = autograd::derivative_table().find(ops::op("aten::mul", "Tensor"));  // saves inputs only
  REQUIRE((relu_row && mul_row));
  CHECK(relu_row->saves_outputs);
  CHECK(!mul_row->saves_outputs);
  // Both kinds run their backward from what they saved.
  const Tensor x = tensor<double>({-1.0, 2.0});
  requires_grad_(x);
  backward(sum(mul(relu(x), x)));
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0.0, 4.0});
}

TEST_CASE("random in-place ops pass no gradient to what they overwrite") {
  const Tensor x = randn({3});
  requires_grad_(x);
  const Tensor h = mul(x, x);
  const Tensor y = add(bernoulli_(uniform_(normal_(h)), 0.5), x);
  backward(sum(y));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 1, 1});
}

TEST_CASE("gradcheck reports a wrong derivative") {
  // relu's gradient at exactly 0 is 0 one-sided, so central differences disagree there.
  const Tensor x = tensor<double>({0.0, 1.0});
  requires_grad_(x);
  const autograd::GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return relu(in[0]); }, {x});
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("Jacobian mismatch for output 0 with respect to input 0 element 0") == 0);
}

TEST_CASE("gradcheck refuses a function output it cannot check, instead of reading through it") {
  const Tensor x = input({3});
  CHECK_THROWS_WITH_AS(gradcheck([](const std::vector<Tensor>&) { return Tensor(); }, {x}),
                       "gradcheck: the function returned an undefined tensor; expected a float64 tensor", Error);
  CHECK_THROWS_WITH_AS(gradcheck([](const std::vector<Tensor>& in) { return to(in[0], ScalarType::Float32); }, {x}),
                       "gradcheck expects a float64 output, got float32", Error);
  // Undefined, or of another size, on a later call only (the Jacobian's rows, or a perturbed input).
  int calls = 0;
  CHECK_THROWS_WITH_AS(gradcheck([&](const std::vector<Tensor>& in) { return ++calls == 1 ? mul(in[0], in[0]) : Tensor(); }, {x}),
                       "gradcheck: the function returned an undefined tensor; expected a float64 tensor", Error);
  calls = 0;
  const std::vector<double> before = x.to_vector<double>();
  CHECK_THROWS_WITH_AS(gradcheck([&](const std::vector<Tensor>& in) { return ++calls <= 4 ? mul(in[0], in[0]) : sum(in[0]); }, {x}),
                       "gradcheck: the function returned 3 elements, then 1 for the same inputs", Error);
  CHECK(x.to_vector<double>() == before);  // the perturbed element was restored
  CHECK(gradcheck([](const std::vector<Tensor>& in) { return mul(in[0], in[0]); }, {x}).ok);
}

}  // namespace test_gradcheck
