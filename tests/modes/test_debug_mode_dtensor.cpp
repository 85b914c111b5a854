// tests/modes/test_debug_mode_dtensor.cpp: DebugMode watching a sharded tensor: placements after the
// shape and redistributions as their own calls, in both formats (Note [Two DTensor formats]), and in
// the JSON. A test-only wrapper subclass stands in for DTensor: on a 1-D mesh of 8 (a fake world, as
// upstream's test), its mm redistributes input 1 from S(0) to R as DTensor's handler does, so the
// logs are upstream's test_debug_mode_mm and the mm example of PR 162665, line for line.
#include <doctest/doctest.h>

#include <memory>
#include <optional>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "distributed/debug_mode_hooks.h"
#include "distributed/fake_process_group.h"
#include "distributed/functional_collectives.h"
#include "modes/debug_hashes.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_debug_mode_dtensor {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;
using distributed::Partial;
using distributed::Placements;
using distributed::Replicate;
using distributed::Shard;

namespace {

constexpr std::int64_t kMeshSize = 8;

// A sharded tensor on a 1-D mesh of 8: its local tensor and placements; the global shape multiplies
// each sharded dimension by 8.
class Spread final : public TensorSubclass, public distributed::DebugModeSubclass {
 public:
  static Tensor wrap(const Tensor& local, Placements placements) {
    DimVector sizes(local.sizes());
    for (const auto& p : placements)
      if (p.is_shard()) sizes[static_cast<std::size_t>(p.dim())] *= kMeshSize;
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new Spread(local, std::move(placements))), sizes,
                               contiguous_strides(sizes), 0, local.dtype(), local.device());
  }
  std::string_view type_name() const override { return "Spread"; }
  std::string_view debug_prefix() const override { return "dt"; }
  Placements debug_placements(const Tensor&) const override { return placements_; }
  // mm's second input goes from S(0) to R, by an all_gather, as DTensor's mm strategy asks; neg's
  // input from [R, R] to [S(2), R] by a chunk and a clone, as the first step of the einsum example's
  // redistribution on a (4, 2) mesh. Every op then runs on the local tensors, and its result keeps
  // the first input's placements (a 0-d result is Partial, as a sum of shards is).
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    Placements out_placements;
    std::int64_t index = 0;
    const bool is_mm = op.name().qualified() == "aten::mm", is_neg = op.name().qualified() == "aten::neg";
    for_each_argument_tensor(op, stack, [&](Tensor& t) {
      auto* s = dynamic_cast<Spread*>(t.subclass());
      if (!s) return;
      if (out_placements.empty()) out_placements = s->placements_;
      t = s->local_;
      if (is_mm && index++ == 1) {
        const distributed::RecordRedistribute input(1, s->placements_, {Replicate{}});
        const distributed::RecordRedistribute local(t, {s->placements_, {Replicate{}}});
        t = distributed::wait_tensor(distributed::all_gather_into_tensor(t, kMeshSize, "0"));
      }
      if (is_neg) {
        const Placements target{Shard{2}, Replicate{}};
        const distributed::RecordRedistribute input(0, s->placements_, target);
        const distributed::RecordRedistribute local(t, {s->placements_, target});
        t = clone(chunk(t, 4, 2)[0]);
      }
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [&](Tensor& t) {
      if (t.defined()) t = wrap(t, t.dim() == 0 ? Placements{Partial{}} : out_placements);
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"local"}, {local_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& f, IntArrayRef, IntArrayRef) const override {
    return wrap(f.inner[0], placements_);
  }

 private:
  Spread(Tensor local, Placements placements) : local_(std::move(local)), placements_(std::move(placements)) {}
  Tensor local_;
  Placements placements_;
};

// torch.mm(x_dtensor, y_dtensor).sum() under `mode`, as upstream's test_debug_mode_mm.
void run_mm(DebugMode& mode) {
  const distributed::FakeWorld world(0, static_cast<int>(kMeshSize));
  const Tensor x = Spread::wrap(randn({1, 8}), {Shard{0}}), y = Spread::wrap(randn({1, 32}), {Shard{0}});
  DebugMode::Guard guard(mode);
  (void)mm(x, y).sum();
}

}  // namespace

TEST_CASE("DebugMode writes a DTensor's mm as PR 162665 did, its redistribution one call") {
  DebugMode mode({.record_torchfunction = true, .record_output = false});
  run_mm(mode);
  CHECK(mode.debug_string() ==
        "  torch.mm(dt: f32[8, 8][S(0)], dt: f32[8, 32][S(0)])\n"
        "    aten::mm(dt: f32[8, 8][S(0)], dt: f32[8, 32][S(0)])\n"
        "      redistribute_input(1, [S(0)], [R])\n"
        "        _c10d_functional::all_gather_into_tensor(t: f32[1, 32], 8, 0)\n"
        "        _c10d_functional::wait_tensor(t: f32[8, 32])\n"
        "      aten::mm(t: f32[1, 8], t: f32[8, 32])\n"
        "  <method 'sum' of 'torch._C.TensorBase' objects>(dt: f32[8, 32][S(0)])\n"
        "    aten::sum(dt: f32[8, 32][S(0)])\n"
        "      aten::sum(t: f32[1, 32])");
  const DebugCall& redistribute = mode.logs()[2];
  CHECK(redistribute.kind == DebugCall::Kind::Redistribute);
  CHECK(redistribute.parent == 1u);             // inside aten::mm(dt)
  CHECK(mode.logs()[3].parent == 2u);           // the all_gather inside the redistribution
  CHECK(mode.logs()[5].parent == 1u);           // the local mm after it
}

TEST_CASE("DebugMode writes a DTensor's mm as upstream's main does with PlacementFormat::Joined") {
  DebugMode mode({.record_torchfunction = true, .record_output = false, .placement_format = PlacementFormat::Joined});
  run_mm(mode);
  // upstream's test_debug_mode_mm, expected string as its test file has it
  CHECK(mode.debug_string() ==
        "  torch.mm(dt: f32[8, 8]| S(0), dt: f32[8, 32]| S(0))\n"
        "    aten::mm(dt: f32[8, 8]| S(0), dt: f32[8, 32]| S(0))\n"
        "      redistribute_input(1, S(0) -> R)\n"
        "        redistribute_input(t: f32[1, 32], trace: S(0)->R)\n"
        "          _c10d_functional::all_gather_into_tensor(t: f32[1, 32], 8, 0)\n"
        "          _c10d_functional::wait_tensor(t: f32[8, 32])\n"
        "      aten::mm(t: f32[1, 8], t: f32[8, 32])\n"
        "  <method 'sum' of 'torch._C.TensorBase' objects>(dt: f32[8, 32]| S(0))\n"
        "    aten::sum(dt: f32[8, 32]| S(0))\n"
        "      aten::sum(t: f32[1, 32])");
  CHECK(mode.logs()[3].parent == 2u);
  CHECK(mode.logs()[4].parent == 3u);
  // ids: the gathered tensor is the one the local mm reads, as in upstream's module docstring
  DebugMode ids({.record_output = true, .record_ids = true, .placement_format = PlacementFormat::Joined});
  run_mm(ids);
  CHECK(ids.debug_string() ==
        "  aten::mm(dt$0: f32[8, 8]| S(0), dt$1: f32[8, 32]| S(0))\n"
        "    redistribute_input(1, S(0) -> R)\n"
        "      redistribute_input(t$2: f32[1, 32], trace: S(0)->R)\n"
        "        _c10d_functional::all_gather_into_tensor(t$2: f32[1, 32], 8, 0)  ->  t$3: f32[8, 32]\n"
        "        _c10d_functional::wait_tensor(t$3: f32[8, 32])  ->  t$3: f32[8, 32]\n"
        "    aten::mm(t$4: f32[1, 8], t$3: f32[8, 32])  ->  t$5: f32[1, 32]\n"
        "  aten::sum(dt$6: f32[8, 32]| S(0))\n"
        "    aten::sum(t$5: f32[1, 32])  ->  t$7: f32[]");
}

TEST_CASE("placements on a 2-D mesh are written as lists, or joined with the shard order numbered") {
  DebugMode lists, joined({.placement_format = PlacementFormat::Joined});
  const Placements pr{Partial{}, Replicate{}}, s2s2{Shard{2}, Shard{2}}, s0s1{Shard{0}, Shard{1}};
  CHECK(lists.placements_string(pr) == "[P, R]");
  CHECK(lists.placements_string(s2s2) == "[S(2), S(2)]");
  CHECK(joined.placements_string(pr) == "PR");
  CHECK(joined.placements_string(s2s2) == "S(2)[0]S(2)[1]");
  CHECK(joined.placements_string(s0s1) == "S(0)S(1)");
  // the einsum's bmm redistribution of input 0 (PR 162665's example, upstream's test_debug_mode_einsum)
  const Tensor local = randn({1, 96, 8});
  for (DebugMode* m : {&lists, &joined}) {
    DebugMode::Guard guard(*m);
    const distributed::RecordRedistribute input(0, pr, s2s2);
    const distributed::RecordRedistribute steps(local, {pr, {Shard{2}, Replicate{}}, s2s2});
  }
  CHECK(lists.debug_string() == "    redistribute_input(0, [P, R], [S(2), S(2)])");
  CHECK(joined.debug_string() ==
        "    redistribute_input(0, PR -> S(2)[0]S(2)[1])\n"
        "      redistribute_input(t: f32[1, 96, 8], trace: PR->S(2)R->S(2)[0]S(2)[1])");
}

TEST_CASE("a redistribution record reaches only the outermost DebugMode entered, and none without one") {
  const Tensor local = randn({2});
  {
    const distributed::RecordRedistribute nothing(0, {Shard{0}}, {Replicate{}});  // no mode: inert
    CHECK(distributed::active_redistribute_listener() == nullptr);
  }
  DebugMode outer, inner;
  {
    DebugMode::Guard outer_guard(outer);
    DebugMode::Guard inner_guard(inner);
    const distributed::RecordRedistribute input(3, {Shard{0}}, {Replicate{}});
    (void)neg(local);
  }
  CHECK(distributed::active_redistribute_listener() == nullptr);
  CHECK(outer.debug_string() == "    redistribute_input(3, [S(0)], [R])\n"
                                "      aten::neg(t: f32[2])  ->  t: f32[2]");
  CHECK(inner.debug_string() == "    aten::neg(t: f32[2])  ->  t: f32[2]");
  CHECK(outer.call_depth() == 0);
  // A mode whose Guard ends inside a redistribution closes it then; the scope's end touches nothing.
  auto mode = std::make_unique<DebugMode>();
  {
    std::optional<distributed::RecordRedistribute> open;
    {
      DebugMode::Guard guard(*mode);
      open.emplace(3, Placements{Shard{0}}, Placements{Replicate{}});
      CHECK(mode->call_depth() == 1);
    }
    CHECK(mode->call_depth() == 0);
    mode.reset();
  }
}

TEST_CASE("redistributions are calls of kind redistribute in the JSON, and read back") {
  for (PlacementFormat format : {PlacementFormat::Lists, PlacementFormat::Joined}) {
    DebugMode mode({.record_output = false, .placement_format = format});
    run_mm(mode);
    const nlohmann::ordered_json j = mode.to_json();
    const auto& call = j["calls"][1];
    CHECK(call["kind"] == "redistribute");
    CHECK(call["name"] == "redistribute_input");
    CHECK(call["parent"] == 0);
    CHECK(call["redistribution"]["arg_index"] == 1);
    CHECK(call["redistribution"]["path"] == nlohmann::ordered_json::parse(R"j([["S(0)"], ["R"]])j"));
    if (format == PlacementFormat::Lists) {
      CHECK(call["line"] == "redistribute_input(1, [S(0)], [R])");
      CHECK_FALSE(j["options"].contains("placement_format"));
    } else {
      CHECK(call["line"] == "redistribute_input(1, S(0) -> R)");
      CHECK(j["options"]["placement_format"] == "joined");
      CHECK(j["calls"][2]["redistribution"]["tensor"] == "t: f32[1, 32]");
      CHECK_FALSE(j["calls"][2]["redistribution"].contains("arg_index"));
    }
    const std::vector<DebugCall> back = calls_from_json(j);
    REQUIRE(back.size() == mode.logs().size());
    CHECK(back[1].kind == DebugCall::Kind::Redistribute);
    CHECK(back[1].redistribution->arg_index == 1);
    CHECK(back[1].render() == mode.logs()[1].render());
    CHECK(check_hash_mismatches(back, mode.logs()).empty());
  }
}

TEST_CASE("chunk and narrow reach a mode as themselves below Autograd, and decompose from the top") {
  // Note [A composite op decomposes at Autograd]: upstream's einsum log shows
  // `aten::chunk(t: f32[1, 96, 8], 4, 2)` inside DTensor's redistribution.
  const Tensor t = randn({1, 96, 8}), g = requires_grad_(randn({4, 6}));
  for (PlacementFormat format : {PlacementFormat::Lists, PlacementFormat::Joined}) {
    DebugMode mode({.record_output = false, .placement_format = format});
    const Tensor x = Spread::wrap(t, {Replicate{}, Replicate{}});
    {
      DebugMode::Guard guard(mode);
      (void)neg(x);
    }
    CHECK(mode.debug_string() == (format == PlacementFormat::Lists ? "  aten::neg(dt: f32[1, 96, 8][R, R])\n"
                                                                     "    redistribute_input(0, [R, R], [S(2), R])\n"
                                                                     "      aten::chunk(t: f32[1, 96, 8], 4, 2)\n"
                                                                     "      aten::clone(t: f32[1, 96, 2])\n"
                                                                     "    aten::neg(t: f32[1, 96, 2])"
                                                                   : "  aten::neg(dt: f32[1, 96, 8]| RR)\n"
                                                                     "    redistribute_input(0, RR -> S(2)R)\n"
                                                                     "      redistribute_input(t: f32[1, 96, 8], trace: RR->S(2)R)\n"
                                                                     "        aten::chunk(t: f32[1, 96, 8], 4, 2)\n"
                                                                     "        aten::clone(t: f32[1, 96, 2])\n"
                                                                     "    aten::neg(t: f32[1, 96, 2])"));
  }
  // From the top, with and without grad: the decomposition's op, as PyTorch's mode sees it.
  DebugMode top({.record_output = false}), below({.record_output = false});
  std::vector<Tensor> pieces;
  {
    DebugMode::Guard guard(top);
    (void)chunk(t, 4, 2);
    (void)chunk(g, 2);
    (void)split(t, IntArrayRef{90, 6}, 1);
    (void)narrow(t, 1, 0, 90);
  }
  {
    DebugMode::Guard guard(below);
    const ExcludeKeyGuard no_autograd(DispatchKey::Autograd);
    pieces = chunk(t, 4, 2);
    (void)chunk(g, 2);
    (void)split(t, IntArrayRef{90, 6}, 1);
    (void)narrow(t, 1, 0, 90);
  }
  CHECK(top.debug_string() == "    aten::split.Tensor(t: f32[1, 96, 8], 2, 2)\n"
                              "    aten::split.Tensor(t: f32[4, 6], 2)\n"
                              "    aten::split_with_sizes(t: f32[1, 96, 8], [90, 6], 1)\n"
                              "    aten::slice.Tensor(t: f32[1, 96, 8], 1, 0, 90)");
  CHECK(below.debug_string() == "    aten::chunk(t: f32[1, 96, 8], 4, 2)\n"
                                "    aten::chunk(t: f32[4, 6], 2)\n"
                                "    aten::split.sizes(t: f32[1, 96, 8], [90, 6], 1)\n"
                                "    aten::narrow(t: f32[1, 96, 8], 1, 0, 90)");
  // below Autograd the mode ran the op on, and the backend's kernel decomposed it: split's pieces
  REQUIRE(pieces.size() == 4);
  CHECK(pieces[3].sizes() == IntArrayRef{1, 96, 2});
  CHECK(equal(pieces[3], split(t, 2, 2)[3]));
  // with grad, the pieces have split's node
  CHECK(chunk(g, 2)[0].grad_fn()->name() == "SplitBackward0");
}

}  // namespace test_debug_mode_dtensor
