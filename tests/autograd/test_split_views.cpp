// tests/autograd/test_split_views.cpp: split, split_with_sizes and chunk against PyTorch
// (tests/golden/split_views_torch.json, from scripts/reference/split_views_reference.py): the
// pieces' shapes, the ops a dispatch mode sees (chunk dispatches split.Tensor or split_with_sizes),
// one SplitBackward0 for all pieces with zeros for a piece without a gradient, and the in-place
// errors of Note [The outputs of a multi-output view] (ops/split_ops.cpp).
#include <algorithm>
#include <functional>

#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_split_views {  // Note [Test files in unity builds]

using namespace strata;
using testing::check_same_ops;
using testing::ops_seen;
using testing::sizes_of;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = testing::read_golden_json("split_views_torch.json");
  return g;
}

std::vector<std::vector<std::int64_t>> shapes_of(const std::vector<Tensor>& pieces) {
  std::vector<std::vector<std::int64_t>> out;
  for (const Tensor& p : pieces) out.push_back(sizes_of(p));
  return out;
}

std::string name_of(const Tensor& t) { return t.grad_fn() ? std::string(t.grad_fn()->name()) : "None"; }

Tensor float_range(std::int64_t n) { return arange(n, {.dtype = ScalarType::Float32}); }

}  // namespace

TEST_CASE("chunk and split give PyTorch's pieces, and a mode sees the op PyTorch's sees") {
  const Tensor x = view(float_range(30), {5, 6});
  const Tensor four = float_range(4);
  const Tensor empty_rows = empty({0, 2});
  const std::vector<std::pair<std::string, std::function<std::vector<Tensor>()>>> cases = {
      {"chunk_3_1", [&] { return x.chunk(3, 1); }},
      {"chunk_4_0", [&] { return x.chunk(4, 0); }},
      {"chunk_6_of_4", [&] { return four.chunk(6); }},  // 4 pieces: chunk may give fewer than asked
      {"chunk_empty", [&] { return empty_rows.chunk(3); }},  // split_with_sizes of three empty pieces
      {"split_2", [&] { return x.split(2); }},
      {"split_sizes", [&] { return x.split({1, 0, 5}, -1); }},
      {"split_with_sizes", [&] { return x.split_with_sizes({2, 3}); }},
  };
  for (const auto& entry : cases) {
    INFO(entry.first);
    const nlohmann::json& expected = golden()["calls"][entry.first];
    std::vector<Tensor> pieces;
    std::vector<std::string> ops = ops_seen([&] { pieces = entry.second(); });
    CHECK(shapes_of(pieces) == expected["shapes"].get<std::vector<std::vector<std::int64_t>>>());
    // PyTorch's list also has the factory that made the input inside its `with`.
    std::vector<std::string> torch_ops = expected["ops"].get<std::vector<std::string>>();
    torch_ops.erase(std::remove_if(torch_ops.begin(), torch_ops.end(),
                                   [](const std::string& op) { return op == "aten.arange.default" || op == "aten.empty.memory_format"; }),
                    torch_ops.end());
    check_same_ops(ops, torch_ops);
  }
}

TEST_CASE("one SplitBackward0 takes every piece's gradient, zeros for a piece that has none") {
  const nlohmann::json& g = golden()["backward_of_some_pieces"];
  const Tensor x = view(float_range(15), {5, 3}).detach();
  requires_grad_(x);
  const std::vector<Tensor> pieces = x.chunk(3);
  REQUIRE(pieces.size() == 3);
  CHECK(name_of(pieces[0]) == g["grad_fn"].get<std::string>());
  CHECK(((pieces[0].grad_fn() == pieces[1].grad_fn()) && (pieces[1].grad_fn() == pieces[2].grad_fn())) == g["same_node"].get<bool>());
  for (std::size_t i = 0; i < 3; ++i) CHECK(pieces[i].impl()->autograd_meta()->output_nr == i);
  CHECK(name_of(x.split_with_sizes({2, 3})[1]) == "SplitWithSizesBackward0");  // PyTorch 1.13's name too
  const Tensor first = sum(pieces[0]);  // in PyTorch's order: the nodes' sequence numbers order the backward
  const Tensor loss = add(first, sum(mul(pieces[2], tensor<float>({2}, {}))));
  check_same_ops(ops_seen([&] { backward(loss); }), g["backward"].get<std::vector<std::string>>());
  CHECK(testing::max_abs_diff(x.grad(), g["grad"].get<std::vector<double>>()) == 0.0);
}

TEST_CASE("an in-place op on a piece is refused in PyTorch's words; without grad it writes the base") {
  const nlohmann::json& g = golden()["inplace_errors"];
  const Tensor x = float_range(4);
  requires_grad_(x);
  const Tensor y = mul(x, 1);
  const std::vector<Tensor> pieces = y.split(2);
  CHECK_THROWS_WITH_AS(mul_(pieces[1], tensor<float>({2}, {})), ("[aten::mul_] " + g["direct"].get<std::string>()).c_str(), Error);
  mul_(y, tensor<float>({2}, {}));  // the base is written: each piece's history is stale, and cannot be regenerated
  CHECK_THROWS_WITH_AS(sum(pieces[0]), ("[aten::sum] " + g["indirect"].get<std::string>()).c_str(), Error);

  const Tensor z = float_range(4);
  const std::vector<Tensor> plain = z.split({3, 1});
  CHECK_THROWS_WITH_AS(mul_(plain[0], select(x, 0, 0)),
                       ("[aten::mul_] " + g["plain_written_with_grad"].get<std::string>()).c_str(), Error);
  mul_(plain[1], tensor<float>({10}, {}));
  CHECK(z.to_vector<float>() == g["plain_written"].get<std::vector<float>>());
}

TEST_CASE("a function mode sees split and chunk under PyTorch's names, with dim where PyTorch passes it") {
  // PyTorch 1.13's resolve_name and argument counts: torch.functional.split and Tensor.split hand dim
  // on as a keyword; chunk and split_with_sizes are builtins that get what the caller wrote.
  struct Names final : FunctionMode {
    std::vector<std::string> seen;
    std::string_view name() const override { return "Names"; }
    void torch_function(FunctionCall& call) override {
      seen.push_back(std::string(call.name()) + " " + std::to_string(call.args().size()) + "+" +
                     std::to_string(call.kwargs().size()));
      call.call_through();
    }
  } names;
  const Tensor x = empty({5, 6});
  {
    FunctionModeGuard guard(names);
    x.chunk(3, 1);
    x.chunk(3);
    split(x, 2);
    x.split({1, 4});
    split_with_sizes(x, {2, 3});
  }
  CHECK(names.seen == std::vector<std::string>{"torch.Tensor.chunk 3+0", "torch.Tensor.chunk 2+0", "torch.functional.split 2+1",
                                               "torch.Tensor.split 2+1", "torch.split_with_sizes 2+0"});
}

}  // namespace test_split_views
