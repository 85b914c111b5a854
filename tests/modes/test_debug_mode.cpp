// tests/modes/test_debug_mode.cpp: DebugMode's log of the MLP step against a reference made with
// PyTorch (scripts/reference/debug_mode_reference.py), its JSON, the hash comparison, the function
// and module records the function layer and module hooks will make, tensor kinds, nesting, and
// what a throwing hook or mode leaves behind.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <set>
#include <sstream>

#include "core/interpose/interposer.h"
#include "nn/functional.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/cli/debug_step.h"
#include "modes/fake_tensor.h"
#include "io/python_repr.h"
#include "tracer/cli/trace_cli.h"

namespace test_debug_mode {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = testing::read_golden_json("debug_mode_torch_seed0_16-32-4_b8.json");
  return ref;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The value after "'hash': " on a log line (the first of a tuple), or NaN.
double hash_of(const std::string& line) {
  auto at = line.find("{'hash': ");
  if (at == std::string::npos) return std::nan("");
  at += 9;
  if (line[at] == '(') ++at;
  return std::stod(line.substr(at));
}

Tensor make_tensor(std::vector<std::int64_t> sizes, float start = 0.5f) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(start + static_cast<float>(i));
  return tensor(values, sizes);
}

}  // namespace

TEST_CASE("python_float_repr writes floats as Python's repr does") {
  CHECK(python_float_repr(0.1) == "0.1");
  CHECK(python_float_repr(-0.1) == "-0.1");
  CHECK(python_float_repr(1.0) == "1.0");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(1e-5) == "1e-05");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1e15) == "1000000000000000.0");
  CHECK(python_float_repr(123456.5) == "123456.5");
  CHECK(python_float_repr(65.34727436304092) == "65.34727436304092");
  CHECK(python_float_repr(2.5e-310) == "2.5e-310");
  CHECK(python_float_repr(1.5e300) == "1.5e+300");
  CHECK(python_float_repr(std::nan("")) == "nan");
  CHECK(python_float_repr(-INFINITY) == "-inf");
  CHECK(python_repr(nlohmann::ordered_json{{"hash", {1.5, nullptr}}}) == "{'hash': (1.5, None)}");
  CHECK(python_repr(nlohmann::ordered_json::array({1})) == "(1,)");
}

TEST_CASE("str() and repr() of text write what is not UTF-8 as \\xNN, so every log dumps as JSON") {
  auto str = [](std::string_view s) {
    std::string out;
    append_python_str(out, s);
    return out;
  };
  auto repr = [](std::string_view s) {
    std::string out;
    append_python_str_repr(out, s);
    return out;
  };
  CHECK(repr("tanh") == "'tanh'");
  CHECK(repr("it's") == "\"it's\"");
  CHECK(repr("a'b\"c") == "'a\\'b\"c'");
  CHECK(repr("a\\b\n\r\t\x01\x7f") == "'a\\\\b\\n\\r\\t\\x01\\x7f'");
  CHECK(repr("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "'caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'");  // é € 😀 stay
  CHECK(repr("\xcd\xcd") == "'\\xcd\\xcd'");                   // stray bytes
  CHECK(repr("\xc3") == "'\\xc3'");                             // cut short
  CHECK(repr("\xc0\xaf") == "'\\xc0\\xaf'");                   // overlong '/'
  CHECK(repr("\xed\xa0\x80") == "'\\xed\\xa0\\x80'");           // a surrogate
  CHECK(repr("\xf4\x90\x80\x80") == "'\\xf4\\x90\\x80\\x80'");   // past U+10FFFF
  CHECK(str("a'\n\xcd") == "a'\n\\xcd");                        // str() escapes only the bad byte
  for (const std::string& s : {repr("\xcd\x80\xff"), str("\xe2\x82"), repr("ok\xf0")})
    CHECK_NOTHROW((void)nlohmann::json(s).dump());
}

TEST_CASE("a string argument that is not UTF-8 is logged escaped, and the log dumps as JSON") {
  DebugMode mode({.record_nn_module = true});
  {
    DebugMode::Guard guard(mode);
    auto module = mode.record_module_call("layer\xcd");
    CHECK_THROWS_AS(gelu(tensor({1.0f}), "\xcd\xcd"), Error);  // refused, and logged first
  }
  CHECK(mode.debug_string().find("[nn.Mod] layer\\xcd\n") != std::string::npos);
  CHECK(mode.debug_string().find("approximate=\\xcd\\xcd") != std::string::npos);
  CHECK_NOTHROW((void)mode.to_json().dump());
}

TEST_CASE("the MLP step's DebugMode log is PyTorch's, line for line") {
  MlpConfig config;
  SUBCASE("plain") {
    const auto mode = debug_step(config, {.record_output = false});
    CHECK(mode->debug_string() == reference()["plain"].get<std::string>());
    // the record-function scope of Optimizer::step dispatched two ops, which are not shown
    for (const DebugCall& c : mode->logs()) CHECK(c.name.rfind("profiler::", 0) == std::string::npos);
  }
  SUBCASE("with outputs and ids") {
    const auto mode = debug_step(config, {.record_output = true, .record_ids = true});
    CHECK(mode->debug_string() == reference()["output_ids"].get<std::string>());
  }
  SUBCASE("with norm hashes: the same lines, the values to float32 rounding") {
    const auto mode = debug_step(config, {.record_output = false}, TensorHash::Norm);
    const auto got = split_lines(mode->debug_string());
    const auto want = split_lines(reference()["norm_hashes"].get<std::string>());
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO(got[i]);
      CHECK(got[i].substr(0, got[i].find("  # ")) == want[i].substr(0, want[i].find("  # ")));
      const double g = hash_of(got[i]), w = hash_of(want[i]);
      // strata's kernels round differently from PyTorch's (another summation order in addmm)
      CHECK(std::abs(g - w) <= 1e-5 * std::abs(w));
    }
    // nll_loss_forward's two returns: a tuple, the second (total_weight) 8.0
    CHECK(got[8].ends_with(", 8.0)}"));
  }
}

TEST_CASE("the MLP step's DebugMode JSON matches its golden file, and each line PyTorch's") {
  MlpConfig config;
  const auto mode = debug_step(config, {.record_output = true, .record_ids = true});
  const nlohmann::ordered_json got = mode->to_json();
  const nlohmann::json golden = testing::read_golden_json("debug_mode_seed0_16-32-4_b8_output_ids.json");
  CHECK(nlohmann::json::parse(got.dump()) == golden);
  const auto want = split_lines(reference()["output_ids"].get<std::string>());
  REQUIRE(got["calls"].size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK("    " + got["calls"][i]["line"].get<std::string>() == want[i]);
  // read back, the calls are the same
  const std::vector<DebugCall> back = calls_from_json(got);
  REQUIRE(back.size() == mode->logs().size());
  for (std::size_t i = 0; i < back.size(); ++i) CHECK(back[i].render() == mode->logs()[i].render());
  CHECK_THROWS_WITH(calls_from_json(nlohmann::ordered_json{{"schema", "strata.debug_mode"}, {"version", 2}}),
                    "calls_from_json: this strata reads strata.debug_mode version 1, got version 2");
}

TEST_CASE("the hash comparison names the first op a one-ulp change in a parameter reaches") {
  MlpConfig config;
  // The second Linear's weight (4 x 32): the first op that reads it is its transpose, op 4.
  auto plant = [](nn::Sequential& model) {
    Tensor w = model.parameters()[2];
    REQUIRE(w.sizes() == std::vector<std::int64_t>{4, 32});
    float* data = static_cast<float*>(w.impl()->data());
    data[5] = std::nextafter(data[5], INFINITY);
  };
  for (TensorHash kind : {TensorHash::Norm, TensorHash::HashTensor}) {
    const auto a = debug_step(config, {.record_output = false}, kind);
    const auto b = debug_step(config, {.record_output = false}, kind);
    const auto c = debug_step(config, {.record_output = false}, kind, plant);
    CHECK(check_hash_mismatches(a->logs(), b->logs()).empty());
    const auto first = first_hash_mismatch(a->logs(), c->logs());
    REQUIRE(first);
    CHECK(first->index == 4);
    CHECK(first->call == "aten::t");
    CHECK(first->line.starts_with("aten::t(t: f32[4, 32])  # {'hash': "));
    CHECK(first->pytree_path == "");
    CHECK(first->rel_diff > 0);
    if (kind == TensorHash::Norm) CHECK(first->rel_diff < 1e-6);
    // the same from the runs saved as JSON
    const auto again = first_hash_mismatch(calls_from_json(a->to_json()), calls_from_json(c->to_json()));
    REQUIRE(again);
    CHECK(again->index == 4);
  }
  // different structure is an error, in upstream's words
  const auto a = debug_step(config, {.record_output = false}, TensorHash::Norm);
  const auto deeper = debug_step(MlpConfig{.sizes = {16, 32, 32, 4}}, {.record_output = false}, TensorHash::Norm);
  CHECK_THROWS_WITH(check_hash_mismatches(a->logs(), deeper->logs()), "Log lengths don't match: 41 vs 61");
  const auto plain = debug_step(config, {.record_output = false});
  CHECK_THROWS_WITH(check_hash_mismatches(a->logs(), plain->logs()),
                    "Output hash presence inconsistent for op[aten::t] at index 0: log1 has hash=True, log2 has hash=False");
}

TEST_CASE("tensor_hash: the L1 norm in float64, and the XOR of 64-bit patterns") {
  const Tensor t = tensor(std::vector<float>{1.5f, -2.0f, 0.25f});
  CHECK(tensor_hash(t, TensorHash::Norm).get<double>() == 3.75);
  const std::uint64_t x = std::bit_cast<std::uint64_t>(1.5) ^ std::bit_cast<std::uint64_t>(-2.0) ^
                          std::bit_cast<std::uint64_t>(0.25);
  CHECK(tensor_hash(t, TensorHash::HashTensor).get<std::uint64_t>() == x);
  const Tensor i = tensor(std::vector<std::int64_t>{3, -4});
  CHECK(tensor_hash(i, TensorHash::Norm).get<double>() == 7.0);
  CHECK(tensor_hash(i, TensorHash::HashTensor).get<std::uint64_t>() == (3ull ^ static_cast<std::uint64_t>(-4)));
  CHECK(tensor_hash(Tensor(), TensorHash::Norm).is_null());
}

TEST_CASE("function and module calls nest the ops below them, as upstream prints them") {
  DebugMode mode({.record_torchfunction = true, .record_nn_module = true, .record_output = true, .record_ids = true});
  const Tensor a = make_tensor({2, 3}), b = make_tensor({3, 4});
  {
    DebugMode::Guard guard(mode);
    auto seq = mode.record_module_call("Sequential");
    auto lin = mode.record_module_call("Sequential.0");
    mm(a, b);  // the Guard's function mode records torch.mm, and the result
  }
  CHECK(mode.debug_string() ==
        "    [nn.Mod] Sequential\n"
        "      [nn.Mod] Sequential.0\n"
        "      torch.mm(t$0: f32[2, 3], t$1: f32[3, 4])  ->  t$2: f32[2, 4]\n"
        "          aten::mm(t$0: f32[2, 3], t$1: f32[3, 4])  ->  t$2: f32[2, 4]");
  CHECK(mode.call_depth() == 0);
  const auto& calls = mode.logs();
  CHECK(!calls[0].parent);
  CHECK(calls[1].parent == 0u);
  CHECK(calls[2].parent == 1u);  // inside Sequential.0, though printed at its depth
  CHECK(calls[3].parent == 2u);
  CHECK(calls[2].kind == DebugCall::Kind::Function);
  CHECK(mode.to_json()["calls"][1]["kind"] == "module");

  SUBCASE("without the options they are not recorded") {
    DebugMode quiet;
    DebugMode::Guard guard(quiet);
    auto m = quiet.record_module_call("Sequential");
    auto f = quiet.record_function_call("torch.mm", {IValue(a), IValue(b)}, {{"out", IValue()}});
    CHECK(!m.active());
    CHECK(!f.active());
    mm(a, b);
    CHECK(quiet.debug_string() == "    aten::mm(t: f32[2, 3], t: f32[3, 4])  ->  t: f32[2, 4]");
  }
  SUBCASE("kwargs, scalars, None and lists are written as Python writes them") {
    DebugMode m({.record_torchfunction = true, .record_output = false});
    DebugMode::Guard guard(m);
    auto f = m.record_function_call("torch.sum", {IValue(a), IValue(std::vector<std::int64_t>{0, 1})},
                                    {{"keepdim", IValue(true)}, {"dtype", IValue()}, {"alpha", IValue(1e-5)}});
    CHECK(m.debug_string() == "  torch.sum(t: f32[2, 3], [0, 1], keepdim=True, dtype=None, alpha=1e-05)");
  }
}

namespace {
// A wrapper subclass that names itself and gives its placements, as the sharded tensor does.
class Sharded final : public TensorSubclass, public DebugModeSubclass {
 public:
  static Tensor wrap(const Tensor& elem) {
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new Sharded(elem)), elem.sizes(), elem.strides(),
                               elem.storage_offset(), elem.dtype(), elem.device());
  }
  std::string_view type_name() const override { return "Sharded"; }
  std::string_view debug_prefix() const override { return "dt"; }
  distributed::Placements debug_placements(const Tensor&) const override { return {distributed::Replicate{}}; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    for_each_argument_tensor(op, stack, [](Tensor& t) {
      if (auto* s = dynamic_cast<Sharded*>(t.subclass())) t = s->elem_;
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [](Tensor& t) {
      if (t.defined()) t = wrap(t);
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"elem"}, {elem_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& f, IntArrayRef, IntArrayRef) const override { return wrap(f.inner[0]); }

 private:
  explicit Sharded(Tensor elem) : elem_(std::move(elem)) {}
  Tensor elem_;
};

}  // namespace

TEST_CASE("a DebugMode entered with record_nn_module and record_torchfunction sees the step's modules and calls") {
  const MlpConfig config{.sizes = {3, 4, 2}, .batch = 2};
  // The modules' calls hold the ops their forward ran; the loss and backward run outside any module.
  const std::string module_log = debug_step(config, {.record_nn_module = true, .record_output = false})->debug_string();
  CHECK(module_log.starts_with("    [nn.Mod] Sequential\n"
                               "      [nn.Mod] Sequential.0\n"
                               "        aten::t(t: f32[4, 3])\n"
                               "        aten::addmm(t: f32[4], t: f32[2, 3], t: f32[3, 4])\n"
                               "      [nn.Mod] Sequential.1\n"
                               "        aten::relu(t: f32[2, 4])\n"
                               "        aten::detach(t: f32[2, 4])\n"
                               "      [nn.Mod] Sequential.2\n"
                               "        aten::t(t: f32[2, 4])\n"
                               "        aten::addmm(t: f32[2], t: f32[2, 4], t: f32[4, 2])\n"
                               "    aten::_log_softmax(t: f32[2, 2], 1, False)\n"));
  // Function calls as written, with the ops they decomposed into one level deeper.
  const std::string function_log = debug_step(config, {.record_torchfunction = true, .record_output = false})->debug_string();
  CHECK(function_log.starts_with("  torch._C._nn.linear(t: f32[2, 3], t: f32[4, 3], t: f32[4])\n"
                                 "      aten::t(t: f32[4, 3])\n"
                                 "      aten::addmm(t: f32[4], t: f32[2, 3], t: f32[3, 4])\n"
                                 "  torch.nn.functional.relu(t: f32[2, 4], inplace=False)\n"
                                 "      aten::relu(t: f32[2, 4])\n"));
  CHECK(function_log.find("  torch._tensor.backward(t: f32[], gradient=None, retain_graph=None, create_graph=False, inputs=None)\n"
                          "      aten::ones_like(") != std::string::npos);
  CHECK(function_log.find("  <method 'add_' of 'torch._C.TensorBase' objects>(t: f32[4, 3], t: f32[4, 3], alpha=-0.1)\n"
                          "      aten::add_.Tensor(t: f32[4, 3], t: f32[4, 3], alpha=-0.1)") != std::string::npos);
  // Leaving the mode removed its function mode.
  CHECK(function_mode_stack_size() == 0);
}

TEST_CASE("upstream's test_real_tensor: a method prints as its C method, a torch function as itself") {
  // linear(x).sum() with record_torchfunction, upstream's expected log line for line; and x + y as
  // upstream's test_debug_mode_backward shows it, <method 'add' ...>.
  const Tensor x = randn({8, 8, 8}), w = randn({8, 8}), b = randn({8});
  DebugMode mode({.record_torchfunction = true, .record_output = false});
  {
    DebugMode::Guard guard(mode);
    (void)nn::functional::linear(x, w, b).sum();
    (void)(w + w);
  }
  CHECK(mode.debug_string() ==
        "  torch._C._nn.linear(t: f32[8, 8, 8], t: f32[8, 8], t: f32[8])\n"
        "      aten::view(t: f32[8, 8, 8], [64, 8])\n"
        "      aten::t(t: f32[8, 8])\n"
        "      aten::addmm(t: f32[8], t: f32[64, 8], t: f32[8, 8])\n"
        "      aten::view(t: f32[64, 8], [8, 8, 8])\n"
        "  <method 'sum' of 'torch._C.TensorBase' objects>(t: f32[8, 8, 8])\n"
        "      aten::sum(t: f32[8, 8, 8])\n"
        "  <method 'add' of 'torch._C.TensorBase' objects>(t: f32[8, 8], t: f32[8, 8])\n"
        "      aten::add.Tensor(t: f32[8, 8], t: f32[8, 8])");
}

TEST_CASE("a wrapper subclass names its tensors and its ops hold the ops on its inner tensors") {
  const Tensor x = Sharded::wrap(make_tensor({2})), y = Sharded::wrap(make_tensor({2}, 1.0f));
  DebugMode mode({.record_output = false});
  DebugMode joined({.record_output = false, .placement_format = PlacementFormat::Joined});
  for (DebugMode* m : {&mode, &joined}) {
    DebugMode::Guard guard(*m);
    add(x, y);
  }
  CHECK(mode.debug_string() ==
        "  aten::add.Tensor(dt: f32[2][R], dt: f32[2][R])\n"
        "    aten::add.Tensor(t: f32[2], t: f32[2])");
  CHECK(mode.logs()[1].parent == 0u);
  CHECK(joined.debug_string() ==
        "  aten::add.Tensor(dt: f32[2]| R, dt: f32[2]| R)\n"
        "    aten::add.Tensor(t: f32[2], t: f32[2])");
}

TEST_CASE("fake tensors print as ft and are recorded only with record_faketensor") {
  FakeTensorMode fake_mode;
  const Tensor a = make_tensor({2}), f = fake_mode.from_tensor(make_tensor({2}));
  for (bool record_fake : {false, true}) {
    DebugMode mode({.record_faketensor = record_fake, .record_output = true});
    {
      DebugMode::Guard guard(mode);
      add(a, a);
      neg(f);
    }
    const std::string plain = "    aten::add.Tensor(t: f32[2], t: f32[2])  ->  t: f32[2]";
    CHECK(mode.debug_string() == (record_fake ? plain + "\n    aten::neg(ft: f32[2])  ->  ft: f32[2]" : plain));
  }
  DebugMode no_real({.record_realtensor = false});
  {
    DebugMode::Guard guard(no_real);
    add(a, a);
  }
  CHECK(no_real.logs().empty());
  // A factory under FakeTensorMode is a fake call: recorded only with record_faketensor.
  DebugMode under_fake({.record_faketensor = true, .record_realtensor = false, .record_output = true});
  {
    ModeGuard fake_guard(fake_mode);
    DebugMode::Guard guard(under_fake);
    empty({3});
  }
  CHECK(under_fake.debug_string() == "    aten::empty.memory_format([3])  ->  ft: f32[3]");
}

TEST_CASE("nested DebugModes each record the ops") {
  const Tensor a = make_tensor({2, 2});
  DebugMode outer({.record_output = true, .record_ids = true}), inner({.record_output = false});
  {
    DebugMode::Guard g1(outer);
    relu(a);
    {
      DebugMode::Guard g2(inner);
      CHECK(get_active_debug_mode() == &outer);
      CHECK(active_debug_modes().size() == 2);
      mul(a, a);
    }
    CHECK(active_debug_modes().size() == 1);
  }
  CHECK(active_debug_modes().empty());
  CHECK(inner.debug_string() == "    aten::mul.Tensor(t: f32[2, 2], t: f32[2, 2])");
  CHECK(outer.debug_string() ==
        "    aten::relu(t$0: f32[2, 2])  ->  t$1: f32[2, 2]\n"
        "    aten::mul.Tensor(t$0: f32[2, 2], t$0: f32[2, 2])  ->  t$2: f32[2, 2]");
}

TEST_CASE("ids follow tensors: an in-place op's output is its input, a new tensor a new id") {
  Tensor a = make_tensor({3});
  DebugMode mode({.record_output = true, .record_ids = true});
  {
    DebugMode::Guard guard(mode);
    for (int i = 0; i < 3; ++i) relu(a);  // each result dies at once; its address comes back
    mul_(a, a);
  }
  CHECK(mode.debug_string() ==
        "    aten::relu(t$0: f32[3])  ->  t$1: f32[3]\n"
        "    aten::relu(t$0: f32[3])  ->  t$2: f32[3]\n"
        "    aten::relu(t$0: f32[3])  ->  t$3: f32[3]\n"
        "    aten::mul_.Tensor(t$0: f32[3], t$0: f32[3])  ->  t$0: f32[3]");
}

namespace {
class Throwing final : public DispatchMode {
 public:
  std::string_view name() const override { return "Throwing"; }
  void dispatch(const OperatorHandle& op, Stack&) override { STRATA_CHECK(false, "Throwing refuses ", op.str()); }
};
}  // namespace

TEST_CASE("a hook or mode that throws leaves the mode stack, the hooks and the depth as they were") {
  const Tensor a = make_tensor({2});
  const std::size_t modes_before = mode_stack_size();
  DebugMode mode({.record_torchfunction = true, .record_output = false});
  SUBCASE("a log hook") {
    {
      DebugMode::Guard guard(mode);
      auto hook = DebugMode::dispatch_hooks(nullptr, [](const DispatchHookCall& c) -> nlohmann::ordered_json {
        STRATA_CHECK(false, "hook refuses ", c.op.str());
        return nullptr;
      });
      auto fn = mode.record_function_call("torch.neg", {IValue(a)});
      CHECK_THROWS_WITH(neg(a), "[aten::neg] hook refuses aten.neg.default");
      CHECK(mode_stack_size() == modes_before + 1);
      CHECK(current_mode() == &mode);
    }
    CHECK(mode.call_depth() == 0);
  }
  SUBCASE("a mode inside DebugMode") {
    Throwing throwing;
    {
      DebugMode::Guard guard(mode);
      try {
        ModeGuard inner(throwing);
        auto fn = mode.record_function_call("torch.neg", {IValue(a)});
        neg(a);
        FAIL("neg should throw");
      } catch (const Error& e) {
        CHECK(std::string(e.what()) == "[aten::neg] Throwing refuses aten.neg.default");
      }
      CHECK(mode_stack_size() == modes_before + 1);
      CHECK(mode.call_depth() == 0);
    }
  }
  SUBCASE("a hook that returns something other than an object") {
    DebugMode::Guard guard(mode);
    auto hook = DebugMode::dispatch_hooks([](const DispatchHookCall&) { return nlohmann::ordered_json(3); }, nullptr);
    CHECK_THROWS_WITH(neg(a), "[aten::neg] DebugMode: a dispatch hook must return a JSON object or null, got number for aten.neg.default");
  }
  CHECK(mode_stack_size() == modes_before);
  CHECK(active_debug_modes().empty());
  // no hook is left behind: a new run logs nothing but the op
  DebugMode after({.record_output = false});
  {
    DebugMode::Guard guard(after);
    neg(a);
  }
  CHECK(after.debug_string() == "    aten::neg(t: f32[2])");
}

TEST_CASE("record and log hooks: record is kept, log is printed; the innermost hook's keys win") {
  const Tensor a = make_tensor({2});
  DebugMode mode({.record_output = false});
  {
    DebugMode::Guard guard(mode);
    auto outer = DebugMode::dispatch_hooks(
        [](const DispatchHookCall& c) { return nlohmann::ordered_json{{"returns", c.num_returns}}; },
        [](const DispatchHookCall&) { return nlohmann::ordered_json{{"tag", "outer"}, {"n", 1}}; });
    auto inner = DebugMode::dispatch_hooks(nullptr, [](const DispatchHookCall& c) {
      return nlohmann::ordered_json{{"tag", "inner"}, {"args", c.args.size()}};
    });
    neg(a);
  }
  CHECK(mode.debug_string() == "    aten::neg(t: f32[2])  # {'tag': 'inner', 'n': 1, 'args': 1}");
  CHECK(mode.logs()[0].record == nlohmann::ordered_json{{"returns", 1}});
}

TEST_CASE("strata-trace --debug prints the log; its flags need --debug") {
  auto run = [](const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int code = run_trace_cli(args, out, err);
    return std::tuple{code, out.str(), err.str()};
  };
  {
    const auto [code, out, err] = run({"--debug"});
    CHECK(code == 0);
    CHECK(err.empty());
    CHECK(out == reference()["plain"].get<std::string>() + "\n");
  }
  {
    const auto [code, out, err] = run({"--debug", "--ids", "--record-output"});
    CHECK(out == reference()["output_ids"].get<std::string>() + "\n");
  }
  {
    const auto [code, out, err] = run({"--debug", "--json", "--hashes", "--sizes", "4,3", "--batch", "2"});
    CHECK(code == 0);
    const auto j = nlohmann::json::parse(out);
    CHECK(j["schema"] == "strata.debug_mode");
    CHECK(j["calls"][1]["line"].get<std::string>().starts_with("aten::addmm(t: f32[3], t: f32[2, 4], t: f32[4, 3])  # {'hash': "));
  }
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--hashes"}, "--hashes: only with --debug"},
           {{"--json", "--seed", "3"}, "--json: only with --flops, --debug or --trace (the report is JSON already)"},
           {{"--ids"}, "--ids: only with --debug"},
           {{"--record-output"}, "--record-output: only with --debug"},
           {{"--torchfunction"}, "--torchfunction: only with --debug"},
           {{"--nn-module", "--fake"}, "--nn-module: only with --debug"},
           {{"--debug", "--sequences"}, "--sequences: not with --debug (it adds to the report, which --debug replaces)"},
           {{"--debug", "--json-out", "x.json"}, "--json-out: not with --debug (redirect standard output instead)"},
           {{"--debug", "--flops"}, "--flops: not with --debug (one view at a time)"},
           {{"--debug", "--fake", "--hashes"}, "--hashes: not with --fake (fake tensors have no values to hash)"},
           {{"--debug", "--dump-tensors", "t.json"}, "--dump-tensors: not with --debug (run without --debug for the tensors)"},
       }) {
    const auto [code, out, err] = run(args);
    CHECK(code == 2);
    CHECK(out.empty());
    CHECK(err == "strata-trace: error: " + message + "\n");
  }
}

}  // namespace test_debug_mode
