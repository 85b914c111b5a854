// tests/autograd/test_inference_mode.cpp: InferenceMode against torch.inference_mode on PyTorch 1.13
// (tests/golden/inference_mode_torch.json, from scripts/reference/inference_mode_reference.py):
// which tensors are inference tensors, which versions move, and the errors an inference tensor meets
// outside the guard (Note [Inference tensors]).
#include <doctest/doctest.h>

#include <functional>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/inference_mode.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_inference_mode {  // Note [Test files in unity builds]

using namespace strata;
using strata::testing::read_golden_json;

namespace {
const nlohmann::json& golden() {
  static const nlohmann::json g = read_golden_json("inference_mode_torch.json");
  return g;
}

Tensor ones3() { return tensor<float>({1, 1, 1}, {3}); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("inference_mode: tensors made under the guard are inference tensors, as in PyTorch") {
  const nlohmann::json& inside = golden()["inside"];
  Tensor x = ones3();
  requires_grad_(x);
  Tensor normal = ones3();
  Tensor y;
  {
    InferenceMode guard;
    CHECK(is_inference_mode_enabled() == inside["enabled"].get<bool>());
    CHECK(autograd::is_grad_enabled() == inside["grad_enabled"].get<bool>());
    y = mul(x, 2.0);
    CHECK(y.requires_grad() == inside["output_requires_grad"].get<bool>());
    CHECK(y.grad_fn() == nullptr);
    CHECK(y.is_inference() == inside["output_is_inference"].get<bool>());
    CHECK(unsqueeze(normal, 0).is_inference() == inside["view_of_normal_is_inference"].get<bool>());
    CHECK(view(y, {3}).is_inference() == inside["view_of_inference_is_inference"].get<bool>());
    add_(y, ones3());  // allowed inside the guard, and counts no version
    CHECK(y.impl()->version() == 0);
    add_(normal, ones3());  // a normal tensor still counts its writes
    CHECK(normal.impl()->version() == inside["normal_version_after_add_"].get<std::uint32_t>());
    {
      InferenceMode off(false);
      CHECK(is_inference_mode_enabled() == golden()["nested_false"]["enabled"].get<bool>());
      CHECK(autograd::is_grad_enabled() == golden()["nested_false"]["grad_enabled"].get<bool>());
      CHECK(ones3().is_inference() == false);  // tensor() makes its storage under the inner guard
      CHECK(add(ones3(), ones3()).is_inference() == golden()["nested_false"]["fresh_is_inference"].get<bool>());
    }
    CHECK(is_inference_mode_enabled() == golden()["restored"]["enabled"].get<bool>());
    CHECK(autograd::is_grad_enabled() == golden()["restored"]["grad_enabled"].get<bool>());
  }
  const nlohmann::json& after = golden()["after"];
  CHECK(is_inference_mode_enabled() == after["enabled"].get<bool>());
  CHECK(autograd::is_grad_enabled() == after["grad_enabled"].get<bool>());
  CHECK(y.to_vector<float>() == after["y"].get<std::vector<float>>());
  CHECK(clone(y).is_inference() == after["clone_is_inference"].get<bool>());
  {
    autograd::NoGradGuard no_grad;
    CHECK(add(ones3(), ones3()).is_inference() == golden()["no_grad_fresh_is_inference"].get<bool>());
  }
}

TEST_CASE("inference_mode: an inference tensor meets autograd and writes outside the guard with PyTorch's errors") {
  const nlohmann::json& errors = golden()["errors"];
  Tensor y;
  {
    InferenceMode guard;
    y = add(ones3(), ones3());
  }
  Tensor w = ones3();
  requires_grad_(w);
  // strata's errors name the op first (Note [Errors name the op]); the rest is PyTorch's message.
  CHECK(error_of([&] { add_(y, ones3()); }) == "[aten::add_] " + errors["inplace_outside"].get<std::string>());
  CHECK(error_of([&] { mul(y, w); }) == "[aten::mul] " + errors["saved_for_backward"].get<std::string>());
  CHECK(error_of([&] { requires_grad_(y); }) == errors["requires_grad_outside"].get<std::string>());
  CHECK(add(y, w).requires_grad() == golden()["not_saved_is_fine"].get<bool>());  // add saves nothing
  // A clone is a normal tensor, which autograd may save.
  Tensor normal = clone(y);
  CHECK_NOTHROW(mul(normal, w));
}

TEST_CASE("inference_mode: a guard restores the flags when an op throws inside it") {
  try {
    InferenceMode guard;
    mul(ones3(), tensor<float>({1, 2}, {2}));
  } catch (const Error&) {
  }
  CHECK_FALSE(is_inference_mode_enabled());
  CHECK(autograd::is_grad_enabled());
}

}  // namespace test_inference_mode
