// tests/modes/test_debug_mode_options.cpp: DebugMode's record_tensor_attributes (against what a
// PyTorch dispatch mode reads at the same points, scripts/reference/debug_mode_attributes_reference.py),
// store_original_args (written when printed, without ids, as upstream renders stored arguments) and
// record_stack_trace (strata's call path, Note [DebugMode's stack trace]); strata-trace --debug --fake.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "autograd/variable.h"
#include "nn/functional.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/cli/debug_step.h"
#include "tracer/cli/trace_cli.h"

using namespace strata;
using namespace strata::tracer;

namespace {
}  // namespace

TEST_CASE("record_tensor_attributes: each tensor's attributes as a dispatch mode sees them, in the order asked") {
  const Tensor w = requires_grad_(ones({4, 3})), b = requires_grad_(ones({4})), x = ones({2, 3});
  const Tensor other = ones({2, 4});
  DebugMode mode({.record_tensor_attributes = {"requires_grad", "is_leaf", "_version"}});
  {
    DebugMode::Guard guard(mode);
    const Tensor y = nn::functional::linear(x, w, b);
    add_(y, other);
  }
  // The reference's output: aten.t [(True, True, 0)] -> (False, True, 0); aten.addmm [(True, True, 0),
  // (False, True, 0), (True, False, 0)] -> (False, True, 0); aten.add_ [(True, False, 0), (False,
  // True, 0)] -> (True, False, 0). One difference: strata bumps an in-place op's version in its
  // kernel, below the interposer, where PyTorch's ADInplaceOrView kernel bumps it above the Python
  // key, so add_'s output shows _version=1 here and 0 in PyTorch (docs/debug-mode.md).
  const std::string t = "{requires_grad=True, is_leaf=True, _version=0}";
  const std::string f = "{requires_grad=False, is_leaf=True, _version=0}";
  const std::string h = "{requires_grad=True, is_leaf=False, _version=0}";
  const std::string bumped = "{requires_grad=True, is_leaf=False, _version=1}";
  CHECK(mode.debug_string() ==
        "    aten::t(t: f32[4, 3]" + t + ")  ->  t: f32[3, 4]" + f + "\n" +
        "    aten::addmm(t: f32[4]" + t + ", t: f32[2, 3]" + f + ", t: f32[3, 4]" + h + ")  ->  t: f32[2, 4]" + f + "\n" +
        "    aten::add_.Tensor(t: f32[2, 4]" + h + ", t: f32[2, 4]" + f + ")  ->  t: f32[2, 4]" + bumped);
  DebugMode others({.record_output = false, .record_tensor_attributes = {"shape", "dtype", "device", "ndim"}});
  {
    DebugMode::Guard guard(others);
    neg(x);
  }
  CHECK(others.debug_string() ==
        "    aten::neg(t: f32[2, 3]{shape=torch.Size([2, 3]), dtype=torch.float32, device=cpu, ndim=2})");
  CHECK_THROWS_WITH_AS(DebugMode({.record_tensor_attributes = {"grad_fn"}}),
                       "DebugMode: record_tensor_attributes names 'grad_fn', which a strata tensor does not have; it "
                       "reads requires_grad, is_leaf, _version, dtype, device, ndim and shape",
                       Error);
}

TEST_CASE("store_original_args keeps the values and writes them when printed, without ids") {
  const Tensor x = ones({2});
  DebugMode mode({.record_ids = true, .record_tensor_attributes = {"requires_grad"}, .store_original_args = true});
  {
    DebugMode::Guard guard(mode);
    neg(x);
  }
  REQUIRE(mode.logs().size() == 1);
  const DebugCall& call = mode.logs()[0];
  REQUIRE(call.original_args.size() == 1);
  CHECK(call.original_args[0].to_tensor().is_same(x));  // the caller's tensor, kept
  CHECK(call.args.empty());                              // not written yet
  requires_grad_(x);  // written when printed: the attribute as it is now; the output as it was
  CHECK(mode.debug_string() == "    aten::neg(t: f32[2]{requires_grad=True})  ->  t$0: f32[2]{requires_grad=False}");
  CHECK(mode.to_json()["calls"][0]["args"] == nlohmann::ordered_json::array({"t: f32[2]{requires_grad=True}"}));
  CHECK(mode.to_json()["options"]["store_original_args"] == true);
  // Without the option the arguments are written at once, with ids.
  DebugMode plain({.record_ids = true});
  {
    DebugMode::Guard guard(plain);
    neg(x);
  }
  CHECK(plain.logs()[0].original_args.empty());
  CHECK(plain.debug_string() == "    aten::neg(t$0: f32[2])  ->  t$1: f32[2]");
}

TEST_CASE("record_stack_trace: the module and function calls around each op, printed above each group") {
  const MlpConfig config{.sizes = {3, 4, 2}, .batch = 2};
  const auto mode = debug_step(config, {.record_output = false, .record_stack_trace = true});
  const std::string log = mode->debug_string();
  CHECK(log.starts_with("    # Sequential > Sequential.0 > torch.nn.functional.linear\n"
                        "    aten::t(t: f32[4, 3])\n"
                        "    aten::addmm(t: f32[4], t: f32[2, 3], t: f32[3, 4])\n"
                        "\n"
                        "    # Sequential > Sequential.1 > torch.nn.functional.relu\n"
                        "    aten::relu(t: f32[2, 4])\n"
                        "    aten::detach(t: f32[2, 4])\n"
                        "\n"
                        "    # Sequential > Sequential.2 > torch.nn.functional.linear\n"
                        "    aten::t(t: f32[2, 4])\n"
                        "    aten::addmm(t: f32[2], t: f32[2, 4], t: f32[4, 2])\n"
                        "\n"
                        "    # torch.nn.functional.cross_entropy\n"
                        "    aten::_log_softmax(t: f32[2, 2], 1, False)\n"));
  CHECK(log.find("\n\n    # torch.Tensor.backward\n    aten::ones_like(") != std::string::npos);
  // Only the paths were tracked: no function or module line was recorded, and the depth is the plain one.
  for (const DebugCall& c : mode->logs()) CHECK(c.kind == DebugCall::Kind::Op);
  CHECK(mode->logs()[0].stack_trace == "Sequential > Sequential.0 > torch.nn.functional.linear");
  CHECK(mode->to_json()["calls"][0]["stack_trace"] == "Sequential > Sequential.0 > torch.nn.functional.linear");
  // show_stack_trace=false prints the plain log; the plain mode's log equals it.
  const auto plain = debug_step(config, {.record_output = false});
  CHECK(mode->debug_string(false) == plain->debug_string());
  CHECK(plain->logs()[0].stack_trace.empty());
  CHECK(function_mode_stack_size() == 0);
}

namespace {
struct CliRun {
  int code;
  std::string out, err;
};
CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_trace_cli(args, out, err);
  return {code, out.str(), err.str()};
}
// The real log with each tensor named as a fake: `t: ` and `t$3: ` become `ft: ` and `ft$3: `.
std::string as_fake(const std::string& log) {
  return std::regex_replace(log, std::regex(R"((^|[^A-Za-z_])t(\$[0-9]+)?: )"), "$1ft$2: ");
}
}  // namespace

TEST_CASE("strata-trace --debug --fake: the fake step's log, the real log's calls with every tensor an ft") {
  const CliRun seed = run_cli({"--debug", "--fake"});
  REQUIRE(seed.code == 0);
  CHECK(seed.err.empty());
  CHECK(seed.out == testing::read_text(testing::golden_path("debug_mode_fake_seed0_16-32-4_b8.txt")));
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {},
           {"--record-output", "--ids"},
           {"--torchfunction", "--nn-module", "--record-output"},
           {"--sizes", "5,7,6,3", "--batch", "3", "--seed", "2", "--record-output", "--ids"}}) {
    std::vector<std::string> real_args{"--debug"}, fake_args{"--debug", "--fake"};
    real_args.insert(real_args.end(), extra.begin(), extra.end());
    fake_args.insert(fake_args.end(), extra.begin(), extra.end());
    const CliRun real = run_cli(real_args), fake = run_cli(fake_args);
    CAPTURE(fake.err);
    REQUIRE(fake.code == 0);
    CHECK(fake.out.find(" t: ") == std::string::npos);
    CHECK(fake.out == as_fake(real.out));
  }
  const CliRun json = run_cli({"--debug", "--fake", "--json", "--sizes", "3,2", "--batch", "2"});
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["options"]["record_faketensor"] == true);
  CHECK(j["calls"][0]["line"] == "aten::t(ft: f32[2, 3])");
}
