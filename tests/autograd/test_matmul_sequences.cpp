// tests/autograd/test_matmul_sequences.cpp: the composites torch.matmul (batched operands included)
// and torch.flatten against PyTorch (tests/golden/matmul_sequences_torch.json, from
// scripts/reference/matmul_sequences_reference.py): the ops a dispatch mode sees forward and backward
// (Note [matmul runs PyTorch's _matmul_impl], nn/functional.cpp), the output's sizes, strides and
// values, and the gradients (the vector products dot and mv included); then matmul's and flatten's errors.
#include "autograd/backward.h"
#include "autograd/variable.h"
#include "nn/functional.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/golden_products.h"
#include "tests/test_helpers.h"

namespace test_matmul_sequences {  // Note [Test files in unity builds]

using namespace strata;
using nlohmann::json;

namespace {

// The script's operand: values ((3 * i) % 7 - 3) / 2, made in the layout the case names.
Tensor operand(const json& spec) {
  std::vector<std::int64_t> made = spec["shape"].get<std::vector<std::int64_t>>();
  const std::string layout = spec["layout"];
  if (layout == "t") std::swap(made[made.size() - 1], made[made.size() - 2]);
  if (layout == "step") made.back() *= 2;
  std::int64_t n = 1;
  for (std::int64_t s : made) n *= s;
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(static_cast<float>((3 * i) % 7 - 3) / 2);
  Tensor t = view(tensor<float>(values), made);
  if (layout == "t") t = transpose(t, -2, -1);
  if (layout == "step") t = slice(t, -1, 0, std::nullopt, 2);
  t = detach(t);
  if (spec["grad"].get<bool>()) requires_grad_(t);
  return t;
}

Tensor run(const json& c, const std::vector<Tensor>& xs) {
  if (c["op"] == "matmul") return nn::functional::matmul(xs[0], xs[1]);
  const json& extra = c["extra"];
  return flatten(xs[0], extra.size() > 0 ? extra[0].get<std::int64_t>() : 0, extra.size() > 1 ? extra[1].get<std::int64_t>() : -1);
}

}  // namespace

TEST_CASE("matmul and flatten dispatch PyTorch's ops and give its outputs and gradients") {
  const json golden = testing::read_golden_json("matmul_sequences_torch.json")["cases"];
  REQUIRE(golden.size() == 29);
  for (const auto& entry : golden.items()) {
    const std::string name = entry.key();
    const json& c = entry.value();
    INFO(name);
    std::vector<Tensor> xs;
    for (const json& spec : c["operands"]) xs.push_back(operand(spec));
    testing::check_golden_product(c, xs, [&] { return run(c, xs); });
  }
}

TEST_CASE("matmul refuses mismatched vector products, scalars and batches in PyTorch's words") {
  CHECK_THROWS_WITH_AS((void)nn::functional::matmul(randn({3}), randn({4})),
                       "[aten::dot] inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                       "elements, but got 3 and 4 elements respectively",
                       Error);
  CHECK_THROWS_WITH_AS((void)nn::functional::matmul(randn({2, 3}), randn({4})),
                       "[aten::mv] size mismatch, got input (2), mat (2x3), vec (4)", Error);
  CHECK_THROWS_WITH_AS((void)nn::functional::matmul(randn({2, 3, 4}), randn({5})),  // contiguous: the fold, then mv
                       "[aten::mv] size mismatch, got input (6), mat (6x4), vec (5)", Error);
  CHECK_THROWS_WITH_AS((void)nn::functional::matmul(randn({2, 3}), randn({})),
                       "both arguments to matmul need to be at least 1D, but they are 2D and 0D", Error);
  CHECK_THROWS_WITH_AS((void)nn::functional::matmul(randn({2, 3, 4}), randn({3, 4, 5})),
                       "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0", Error);
}

TEST_CASE("flatten: start_dim after end_dim and dims out of range are refused as PyTorch does") {
  CHECK_THROWS_WITH_AS((void)flatten(randn({2, 3, 4}), 2, 1),
                       "[aten::flatten] flatten() has invalid args: start_dim cannot come after end_dim", Error);
  CHECK_THROWS_WITH_AS((void)flatten(randn({2, 3}), 0, 2),
                       "[aten::flatten] Dimension out of range (expected to be in range of [-2, 1], but got 2)", Error);
  CHECK(testing::sizes_of(randn({2, 3}).flatten()) == std::vector<std::int64_t>{6});
  CHECK(testing::sizes_of(randn({2, 3, 4}).permute({2, 0, 1}).flatten(1)) == std::vector<std::int64_t>{4, 6});
}

TEST_CASE("dot, mv and pow are Tensor methods too, as LibTorch spells them") {
  const Tensor a = tensor<float>({1, 2, 3});
  const Tensor m = tensor<float>({1, 0, 2, -1, 3, 1}, {2, 3});
  CHECK(a.dot(a).item<float>() == 14);
  CHECK(m.mv(a).to_vector<float>() == std::vector<float>{7, 8});
  CHECK(a.pow(tensor<float>({2, 0, 1})).to_vector<float>() == std::vector<float>{1, 1, 3});
}

}  // namespace test_matmul_sequences
