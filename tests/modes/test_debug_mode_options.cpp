// tests/modes/test_debug_mode_options.cpp: DebugMode's record_tensor_attributes (against what a
// PyTorch dispatch mode reads at the same points, scripts/reference/debug_mode_attributes_reference.py),
// store_original_args (written when printed, without ids, as upstream renders stored arguments) and
// record_stack_trace (strata's call path, Note [DebugMode's stack trace]); strata-trace --debug --fake.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <sstream>

#include "autograd/variable.h"
#include "nn/functional.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/cli/debug_step.h"
#include "tracer/cli/trace_cli.h"

namespace test_debug_mode_options {  // Note [Test files in unity builds]

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
}

namespace {
// A wrapper subclass that sets an attribute on its tensors (Python's `self.tag = ...` in __init__).
class Tagged final : public TensorSubclass, public DebugModeSubclass {
 public:
  static Tensor wrap(Tensor elem, std::string tag) {
    const IntArrayRef sizes = elem.sizes(), strides = elem.strides();
    const ScalarType dtype = elem.dtype();
    IntrusivePtr<TensorSubclass> payload(new Tagged(std::move(elem), std::move(tag)));
    return make_wrapper_tensor(std::move(payload), sizes, strides, 0, dtype, Device::CPU);
  }
  std::string_view type_name() const override { return "Tagged"; }
  std::string_view debug_prefix() const override { return "tt"; }
  std::optional<std::string> attribute(const Tensor&, std::string_view name) const override {
    if (name == "tag") return tag_;
    return std::nullopt;
  }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    for_each_argument_tensor(op, stack, [](Tensor& t) {
      if (const auto* s = dynamic_cast<const Tagged*>(t.subclass())) t = s->elem_;
    });
    op.call(stack);
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"elem"}, {elem_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& f, IntArrayRef, IntArrayRef) const override { return wrap(f.inner[0], tag_); }

 private:
  Tagged(Tensor elem, std::string tag) : elem_(std::move(elem)), tag_(std::move(tag)) {}
  Tensor elem_;
  std::string tag_;
};
}  // namespace

TEST_CASE("record_tensor_attributes: any attribute a user or a subclass sets, skipped where a tensor has none") {
  // Upstream's test_tensor_attributes: x.a1 = "x1", x.a2 = "x2", y.a1 = "y", then torch.matmul(y, x).
  const Tensor x = randn({8, 8}), y = randn({8, 8, 8});
  std::map<const TensorImpl*, std::map<std::string, std::string, std::less<>>> user{
      {x.impl(), {{"a1", "x1"}, {"a2", "x2"}}}, {y.impl(), {{"a1", "y"}}}};
  DebugModeOptions options{.record_torchfunction = true, .record_faketensor = true, .record_output = false,
                           .record_tensor_attributes = {"a1", "a2"}};
  options.tensor_attribute = [&](const Tensor& t, std::string_view name) -> std::optional<std::string> {
    const auto it = user.find(t.impl());
    if (it == user.end()) return std::nullopt;
    const auto value = it->second.find(name);
    return value == it->second.end() ? std::nullopt : std::optional<std::string>(value->second);
  };
  DebugMode mode(options);
  {
    DebugMode::Guard guard(mode);
    nn::functional::matmul(y, x);
  }
  CHECK(mode.debug_string() ==
        "  torch.matmul(t: f32[8, 8, 8]{a1=y}, t: f32[8, 8]{a1=x1, a2=x2})\n"
        "      aten::view(t: f32[8, 8, 8]{a1=y}, [64, 8])\n"
        "      aten::mm(t: f32[64, 8], t: f32[8, 8]{a1=x1, a2=x2})\n"
        "      aten::_unsafe_view(t: f32[64, 8], [8, 8, 8])");
  // A subclass's own attribute, beside a built-in one; a name nobody has is skipped, and a tensor
  // with none of the names gets no braces.
  const Tensor plain = ones({2}), tagged = Tagged::wrap(ones({2}), "w");
  DebugMode subclass_mode({.record_output = false, .record_tensor_attributes = {"grad_fn", "tag", "ndim"}});
  DebugMode no_braces({.record_output = false, .record_tensor_attributes = {"a1"}});
  {
    DebugMode::Guard guard(subclass_mode);
    neg(plain);
    neg(tagged);
  }
  {
    DebugMode::Guard guard(no_braces);
    neg(plain);
  }
  CHECK(subclass_mode.debug_string() ==
        "    aten::neg(t: f32[2]{ndim=1})\n"
        "  aten::neg(tt: f32[2]{tag=w, ndim=1})\n"
        "    aten::neg(t: f32[2]{ndim=1})");
  CHECK(no_braces.debug_string() == "    aten::neg(t: f32[2])");
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

}  // namespace test_debug_mode_options
