// tests/modes/test_flop_counter.cpp: FlopCounterMode (torch/utils/flop_counter.py): the MLP step's
// FLOPs per phase and op, a second configuration worked out by hand, per-module totals, get_table()
// against tabulate's output (tests/golden/flop_tables_torch.json, scripts/reference/
// flop_table_reference.py), JSON, user formulas, counting under FakeTensorMode, custom_mapping, and
// upstream's test_flop_counter.py cases for the ops strata has, with its numbers.
#include <doctest/doctest.h>

#include "autograd/backward.h"
#include "autograd/custom_function.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/autograd_meta.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "ops/typed_operator.h"
#include "tests/test_helpers.h"
#include "modes/flop_counter.h"
#include "tracer/cli/mlp_experiment.h"

namespace test_flop_counter {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {
using OpCounts = FlopCounterMode::OpCounts;

FlopCounterMode counted_step(const MlpConfig& config, FakeTensorMode* fake = nullptr) {
  FlopCounterMode flops;
  run_step(config, PhasedMode::of(flops), fake);
  return flops;
}

std::string golden_table(const char* name) { return testing::read_golden_json("flop_tables_torch.json")[name]; }

// Each module's forward and backward totals against those PyTorch 1.13's engine gives the same tracking
// (scripts/reference/flop_modules_reference.py): {phase: {module: {op: flops}}}.
void check_against_torch(const FlopCounterMode& flops, const char* name) {
  const nlohmann::json torch = testing::read_golden_json("flop_modules_torch.json")[name]["phases"];
  const nlohmann::ordered_json modules = flops.to_json()["modules"];
  std::size_t torch_modules = 0;
  for (const auto& [phase, per_module] : torch.items())
    for (const auto& [module, ops] : per_module.items()) {
      std::int64_t total = 0;
      for (const auto& [op, n] : ops.items()) total += n.get<std::int64_t>();
      const std::string where = phase + " " + module;  // INFO may not capture the bindings (clang 14)
      INFO(where);
      REQUIRE(modules.contains(module));
      CHECK(modules[module]["phases"][phase] == total);
      torch_modules += phase == "forward" ? 1 : 0;
    }
  CHECK(modules.size() == torch_modules);
}
}  // namespace

TEST_CASE("the MLP step: forward 10,240 FLOPs (addmm), backward 12,288 (mm), optimizer 0") {
  // forward: addmm(b, 8x16, 16x32) = 8*32*2*16 = 8192 and addmm(b, 8x32, 32x4) = 8*4*2*32 = 2048.
  // backward: layer 2's grad_input (8x4)@(4x32) = 2048 and grad_weight (4x8)@(8x32) = 2048; layer 1's
  // grad_weight (32x8)@(8x16) = 8192 (the input does not require grad: no grad_input mm).
  const FlopCounterMode flops = counted_step(MlpConfig{});
  CHECK(flops.get_phase_counts() == std::vector<std::pair<std::string, OpCounts>>{
                                        {"forward", {{"aten.addmm", 10240}}},
                                        {"backward", {{"aten.mm", 12288}}},
                                        {"optimizer", {}}});
  CHECK(flops.get_total_flops() == 22528);
  // Per module (run_step enters the mode's tracker): each Linear's addmm counts for it in the forward;
  // in the backward a module is open from its output's gradient to its input's, so layer 2's two mms
  // (2048 + 2048) count for Sequential.2 and layer 1's weight mm (8192) for Sequential.0; ReLU counts
  // nothing; Sequential holds everything (its input needs no gradient: it is left at the pass's end).
  //   Sequential.0: 8192 + 8192 = 16384, Sequential.2: 2048 + 4096 = 6144, Sequential: 22528.
  CHECK(flops.get_flop_counts() == std::vector<std::pair<std::string, OpCounts>>{
                                       {"Global", {{"aten.addmm", 10240}, {"aten.mm", 12288}}},
                                       {"Sequential", {{"aten.addmm", 10240}, {"aten.mm", 12288}}},
                                       {"Sequential.0", {{"aten.addmm", 8192}, {"aten.mm", 8192}}},
                                       {"Sequential.2", {{"aten.addmm", 2048}, {"aten.mm", 4096}}}});
  check_against_torch(flops, "seed");
  CHECK(flops.get_table() == golden_table("seed"));
  CHECK(flops.get_phase_table() ==
        "Phase             FLOP    % Total\n"
        "-------------  -------  ---------\n"
        "forward        10.240K     45.45%\n"
        " - aten.addmm  10.240K     45.45%\n"
        "backward       12.288K     54.55%\n"
        " - aten.mm     12.288K     54.55%\n"
        "optimizer       0.000K      0.00%");
  CHECK(flops.to_json().dump() ==
        R"({"total_flops":22528,"phases":{"forward":{"total":10240,"ops":{"aten.addmm":10240}},)"
        R"("backward":{"total":12288,"ops":{"aten.mm":12288}},"optimizer":{"total":0,"ops":{}}},)"
        R"("modules":{"Global":{"total":22528,"ops":{"aten.addmm":10240,"aten.mm":12288},)"
        R"("phases":{"forward":10240,"backward":12288,"optimizer":0}},)"
        R"("Sequential":{"total":22528,"ops":{"aten.addmm":10240,"aten.mm":12288},)"
        R"("phases":{"forward":10240,"backward":12288,"optimizer":0}},)"
        R"("Sequential.0":{"total":16384,"ops":{"aten.addmm":8192,"aten.mm":8192},)"
        R"("phases":{"forward":8192,"backward":8192,"optimizer":0}},)"
        R"("Sequential.2":{"total":6144,"ops":{"aten.addmm":2048,"aten.mm":4096},)"
        R"("phases":{"forward":2048,"backward":4096,"optimizer":0}}}})");
}

TEST_CASE("per module, forward and backward: a nested model worked out by hand, under FlopCounterMode::Guard") {
  // Sequential(Sequential(Linear(6, 8), ReLU), Linear(8, 3)) on x 5x6 that requires grad; loss sum(out).
  // forward: Sequential.0.0 addmm 5*8*2*6 = 480, Sequential.1 addmm 5*3*2*8 = 240; 720 in all.
  // backward, a module open from its output's gradient until its input's is computed:
  //   Sequential.1 (with Sequential): grad_input (5x3)@(3x8) = 240, grad_weight (3x5)@(5x8) = 240;
  //   then ReLU (Sequential.0.1, with Sequential.0), nothing; then Sequential.0.0 (ReLU left, Sequential
  //   and Sequential.0 still open): grad_input (5x8)@(8x6) = 480, grad_weight (8x5)@(5x6) = 480;
  //   all are left when x's gradient is computed. Sequential.1: 480, Sequential.0(.0): 960, Sequential: 1440.
  auto inner = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Linear>(6, 8), std::make_shared<nn::ReLU>()});
  auto model = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{inner, std::make_shared<nn::Linear>(8, 3)});
  Tensor x = randn({5, 6});
  requires_grad_(x);
  FlopCounterMode flops;
  {
    FlopCounterMode::Guard guard(flops);
    const Tensor loss = sum((*model)(x));
    flops.set_phase("backward");
    backward(loss);
  }
  CHECK(flops.get_flop_counts() == std::vector<std::pair<std::string, OpCounts>>{
                                       {"Global", {{"aten.addmm", 720}, {"aten.mm", 1440}}},
                                       {"Sequential", {{"aten.addmm", 720}, {"aten.mm", 1440}}},
                                       {"Sequential.0", {{"aten.addmm", 480}, {"aten.mm", 960}}},
                                       {"Sequential.0.0", {{"aten.addmm", 480}, {"aten.mm", 960}}},
                                       {"Sequential.1", {{"aten.addmm", 240}, {"aten.mm", 480}}}});
  check_against_torch(flops, "nested");
  const nlohmann::json torch = testing::read_golden_json("flop_modules_torch.json")["nested"];
  CHECK(flops.get_table() == torch["table"].get<std::string>());
  CHECK(flops.get_table(1) == torch["table_depth1"].get<std::string>());
  CHECK(flops.get_table(3) == torch["table_depth3"].get<std::string>());
  CHECK(flops.mod_tracker().parents() == std::set<std::string>{"Global"});
}

TEST_CASE("FlopCounterMode::Guard: no hook is left once it ends, even with the graph kept or a forward throwing") {
  auto model = nn::make_mlp({4, 3, 2});
  Tensor x = randn({2, 4});
  requires_grad_(x);
  FlopCounterMode flops;
  Tensor out;
  {
    FlopCounterMode::Guard guard(flops);
    CHECK(mode_stack_size() == 1);
    CHECK(nn::detail::module_hooks_registered());
    out = (*model)(x);
  }
  CHECK(mode_stack_size() == 0);
  CHECK_FALSE(nn::detail::module_hooks_registered());
  CHECK(out.grad_fn()->hooks() != nullptr);
  for (const auto& list : out.grad_fn()->hooks()->tensor_pre) CHECK(list.list->empty());
  CHECK(x.impl()->autograd_meta()->hooks->pre->empty());
  // A later backward of the kept graph is untracked: a new counter sees Global only. Layer 2 (3 -> 2):
  // grad_input (2x2)@(2x3) = 24, grad_weight (3x2)@(2x2) = 24; layer 1 (4 -> 3): grad_input
  // (2x3)@(3x4) = 48, grad_weight (4x2)@(2x3) = 48; 144 in all.
  FlopCounterMode later;
  {
    ModeGuard guard(later);
    backward(sum(out));
  }
  CHECK(later.get_flop_counts() == std::vector<std::pair<std::string, OpCounts>>{{"Global", {{"aten.mm", 144}}}});
  // A forward that throws under the guard: every stack is back as it was.
  CHECK_THROWS_WITH_AS(
      [&] {
        FlopCounterMode::Guard guard(flops);
        (void)(*model)(randn({2, 5}));
      }(),
      doctest::Contains("mat1 and mat2 shapes cannot be multiplied"), Error);
  CHECK(mode_stack_size() == 0);
  CHECK_FALSE(nn::detail::module_hooks_registered());
  CHECK(flops.mod_tracker().parents() == std::set<std::string>{"Global"});
}

TEST_CASE("a second configuration, worked out by hand: sizes 10,20,30,4, batch 6") {
  // forward, one addmm per layer, batch x in @ in x out = 6*out*2*in:
  //   6*20*2*10 = 2400, 6*30*2*20 = 7200, 6*4*2*30 = 1440; total 11040.
  // backward, per layer grad_weight (out x 6)@(6 x in) = out*in*2*6, the same as its forward, and
  // grad_input (6 x out)@(out x in) = the same again, except for layer 1 (x does not require grad):
  //   layer 3: 1440 + 1440, layer 2: 7200 + 7200, layer 1: 2400; total 19680 = 2 * 11040 - 2400.
  const FlopCounterMode flops = counted_step(MlpConfig{3, {10, 20, 30, 4}, 6, 0.1});
  CHECK(flops.get_phase_counts() == std::vector<std::pair<std::string, OpCounts>>{
                                        {"forward", {{"aten.addmm", 11040}}},
                                        {"backward", {{"aten.mm", 19680}}},
                                        {"optimizer", {}}});
  CHECK(flops.get_total_flops() == 30720);
}

TEST_CASE("the step under FakeTensorMode counts what the real step counts") {
  for (const MlpConfig& config : {MlpConfig{}, MlpConfig{3, {10, 20, 30, 4}, 6, 0.1}}) {
    FakeTensorMode fake;
    CHECK(counted_step(config, &fake).to_json() == counted_step(config).to_json());
  }
}

TEST_CASE("per module: counts go to Global and every open module; the table shows upstream's hierarchy") {
  // What the module hooks do around Sequential, Sequential.0 and Sequential.2 (Linear layers), with
  // one mm outside any module.
  const Tensor x = randn({8, 16}), w0 = randn({32, 16}), b0 = randn({32}), w1 = randn({4, 32}), b1 = randn({4});
  auto run = [&](FlopCounterMode& flops, bool outside) {
    ModeGuard guard(flops);
    flops.enter_module("Sequential");
    flops.enter_module("Sequential.0");
    const Tensor h = addmm(b0, x, t(w0));  // 8192
    flops.exit_module("Sequential.0");
    flops.enter_module("Sequential.2");
    flops.enter_module("Sequential.2");  // entered twice (a shared module): counted once
    const Tensor y = addmm(b1, h, t(w1));  // 2048
    flops.exit_module("Sequential.2");
    flops.exit_module("Sequential.2");
    flops.exit_module("Sequential");
    if (outside) (void)mm(y, w1);  // 8x4 @ 4x32 = 2048
  };
  FlopCounterMode flops;
  run(flops, true);
  CHECK(flops.get_flop_counts() == std::vector<std::pair<std::string, OpCounts>>{
                                       {"Global", {{"aten.addmm", 10240}, {"aten.mm", 2048}}},
                                       {"Sequential", {{"aten.addmm", 10240}}},
                                       {"Sequential.0", {{"aten.addmm", 8192}}},
                                       {"Sequential.2", {{"aten.addmm", 2048}}}});
  CHECK(flops.get_table() == golden_table("modules"));
  CHECK(flops.get_table(1) == golden_table("modules_depth1"));
  CHECK(flops.to_json()["modules"]["Sequential.0"]["total"] == 8192);
  FlopCounterMode inside;
  run(inside, false);
  CHECK(inside.get_table() == golden_table("subsumed"));
  CHECK_THROWS_WITH_AS(inside.exit_module("Sequential"),
                       "FlopCounterMode: exit_module('Sequential') without a matching enter_module", Error);
}

TEST_CASE("the table's suffix and number formats: none below 10^4, 1.01e9 as 1010.000M, nothing counted") {
  FlopCounterMode small;
  {
    ModeGuard guard(small);
    (void)mm(randn({2, 3}), randn({3, 4}));  // 48
    (void)mm(randn({3, 4}), randn({4, 5}));  // 120
  }
  CHECK(small.get_table() == golden_table("small"));
  FlopCounterMode big;
  FakeTensorMode fake;  // the operands are 4 MB and 2 MB real; fakes have no data at all
  {
    ModeGuard fake_guard(fake);
    ModeGuard guard(big);
    (void)mm(randn({1000, 1010}), randn({1010, 500}));
  }
  CHECK(big.get_total_flops() == 1010000000);
  CHECK(big.get_table() == golden_table("billion"));
  CHECK(FlopCounterMode().get_table() == golden_table("empty"));
}

namespace {
Tensor twice_cpu(const Tensor& x) { return add(x, x); }
Tensor twice_meta(const Tensor& x) { return empty_like(x); }
Tensor twice(const Tensor& x) { return testing::call_user_op<&twice_cpu, &twice_meta>("flopstest", "twice", x); }
}  // namespace

TEST_CASE("register_flop_formula counts a user's op, keyed without its overload") {
  FlopCounterMode before;
  {
    ModeGuard guard(before);
    (void)twice(randn({3, 5}));
  }
  CHECK(before.get_total_flops() == 0);
  register_flop_formula("flopstest::twice", [](const IValue* args) { return args[0].to_tensor().numel(); });
  FlopCounterMode after;
  {
    ModeGuard guard(after);
    (void)twice(randn({3, 5}));
  }
  CHECK(after.get_flop_counts() ==
        std::vector<std::pair<std::string, OpCounts>>{{"Global", {{"flopstest.twice", 15}}}});
  CHECK_THROWS_WITH_AS(register_flop_formula("flopstest::twice", nullptr),
                       "register_flop_formula(flopstest::twice): expected a formula, got none", Error);
}

TEST_CASE("an op that fails is not counted; shapes an op refuses count 0 and the op's error follows") {
  FlopCounterMode flops;
  ModeGuard guard(flops);
  CHECK_THROWS_AS((void)mm(randn({2, 3}), randn({4, 5})), Error);
  CHECK_THROWS_AS((void)mm(randn({3}), randn({3, 5})), Error);
  CHECK(flops.get_total_flops() == 0);
}

TEST_CASE("a FLOP count past int64 is an error (only fakes can be that large)") {
  FakeTensorMode fake;
  ModeGuard fake_guard(fake);
  const Tensor a = empty({1 << 30, 1 << 30});  // 2^60 elements, no data
  FlopCounterMode flops;
  ModeGuard guard(flops);
  CHECK_THROWS_WITH_AS((void)mm(a, a), "[aten::mm] FlopCounterMode: a FLOP count overflows int64", Error);  // 2^91
  CHECK(flops.get_total_flops() == 0);
}

// Upstream's test_flop_counter.py, the cases whose ops strata has, with upstream's numbers (T is
// upstream's randn helper; `with FlopCounterMode() as mode` is a Guard).
namespace {
Tensor T(IntArrayRef shape, bool requires_grad = false) {
  Tensor t = randn(shape);
  if (requires_grad) requires_grad_(t);
  return t;
}
std::int64_t global_flops(const FlopCounterMode& mode) {
  std::int64_t n = 0;
  for (const auto& [module, ops] : mode.get_flop_counts())
    if (module == "Global")
      for (const auto& op : ops) n += op.second;
  return n;
}
// test_autograd_op's _CustomOp: mm(input, input), and a backward of two mms added.
struct SquareMm : autograd::Function<SquareMm> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& input) { return mm(input, input); }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) {
    const Tensor first = mm(g[0], g[0]), second = mm(g[0], g[0]);  // in a written order
    return {first + second};
  }
};
}  // namespace

TEST_CASE("upstream's test_flop_counter_variety and test_op: mm, addmm, matmul, Linear") {
  const auto linear = std::make_shared<nn::Linear>(9, 10);
  FlopCounterMode mode;
  {
    FlopCounterMode::Guard guard(mode);
    mm(T({4, 5}), T({5, 6}));                      // 4*6*2*5 = 240
    addmm(T({4, 6}), T({4, 5}), T({5, 6}), 0.5, 0.5);  // 240: the bias is not counted
    nn::functional::matmul(T({5, 6}), T({6, 7}));  // 5*7*2*6 = 420
    mm(T({6, 7}), T({7, 8}));  // upstream's einsum("ab,bc->ac"), which runs this product: 672
    linear->forward(T({8, 9}));                    // 8*10*2*9 = 1440
  }
  CHECK(global_flops(mode) == 3012);
  {
    FlopCounterMode::Guard guard(mode);  // entering again starts from zero
    mm(T({4, 5}), T({5, 6}));
  }
  CHECK(global_flops(mode) == 240);
  {
    FlopCounterMode::Guard guard(mode);
    addmm(T({4, 6}), T({4, 5}), T({5, 6}));
    addmm(T({4, 1}), T({4, 5}), T({5, 6}));
    addmm(T({6}), T({4, 5}), T({5, 6}));
  }
  CHECK(global_flops(mode) == 720);
}

TEST_CASE("upstream's test_backward_reset and test_autograd_op: backward mms count, a custom Function's too") {
  FlopCounterMode mode;
  {
    FlopCounterMode::Guard guard(mode);
    const Tensor a = T({4, 5}, true);
    strata::backward(sum(mm(a, a.t())));
    strata::backward(sum(mm(a, a.t())));
  }
  CHECK(global_flops(mode) == 960);  // per pass: the forward's mm and the backward's two, 160 each
  const Tensor a = T({5, 5}, true);
  {
    FlopCounterMode::Guard guard(mode);
    strata::backward(sum(SquareMm::apply(a)));
  }
  CHECK(global_flops(mode) == 750);  // 250 forward, 500 backward
}

TEST_CASE("upstream's test_custom and test_noop: custom_mapping replaces a formula for one mode only") {
  FlopCounterMode mode(2, "forward", {{"aten::add", [](const IValue*) -> std::int64_t { return 5; }}});
  {
    FlopCounterMode::Guard guard(mode);
    const Tensor a = T({4, 5});
    (void)(a + a);
  }
  CHECK(global_flops(mode) == 5);
  // Upstream's second formula counts the output's elements; a strata formula reads the arguments.
  FlopCounterMode numel(2, "forward", {{"aten::add", [](const IValue* args) { return args[0].to_tensor().numel(); }}});
  {
    FlopCounterMode::Guard guard(numel);
    const Tensor a = T({4, 5});
    (void)(a + a);
  }
  CHECK(global_flops(numel) == 20);
  // A formula of one mode is no other's; it replaces the registered one for its op.
  FlopCounterMode plain, replaced(2, "forward", {{"aten::mm", [](const IValue*) -> std::int64_t { return 1; }}});
  {
    FlopCounterMode::Guard outer(plain);
    FlopCounterMode::Guard inner(replaced);
    const Tensor a = T({4, 5});
    (void)(a + a);
    mm(T({4, 5}), T({5, 6}));
  }
  CHECK(global_flops(plain) == 240);
  CHECK(global_flops(replaced) == 1);
  FlopCounterMode noop;
  {
    FlopCounterMode::Guard guard(noop);
    exp(T({4, 5}));
  }
  CHECK(global_flops(noop) == 0);
  CHECK_THROWS_WITH_AS(FlopCounterMode(2, "forward", {{"aten::add.Tensor", [](const IValue*) { return std::int64_t{1}; }}}),
                       "FlopCounterMode: custom_mapping: 'aten::add.Tensor' is not an op name such as 'aten::add' "
                       "(namespace::name, without an overload: a formula covers every overload of its op)",
                       Error);
}

}  // namespace test_flop_counter
