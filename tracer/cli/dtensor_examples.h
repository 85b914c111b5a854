// tracer/cli/dtensor_examples.h: the two programs of the DTensor DebugMode pull request (PyTorch PR
// 162665), run on real DTensors over a fake world of 8 ranks, under a DebugMode: what
// `strata-trace --debug --dtensor-example mm|einsum` prints, and what the golden tests compare.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "../../modes/debug_mode.h"

namespace strata::tracer {

// Note [The DTensor examples]
// Both run as one rank of a fake world of 8 (upstream's test: init_process_group("fake",
// world_size=8)); the rank decides the sub-groups' names, so the seed's einsum (rank 1) reduces on
// groups "2" and "3" where upstream's test file (rank 0) reduces on "1" and "3".
// - mm: torch.mm(x, y) of x = from_local(randn(1, 8), [Shard(0)]) and y = from_local(randn(1, 32),
//   [Shard(0)]) on a 1-D mesh of 8: global f32[8, 8] and f32[8, 32].
// - einsum: torch.einsum("bld,dnh->blnh", a, b) of a = from_local(randn(16, 6, 8), [Partial, Replicate])
//   and b = from_local(randn(8, 4, 4), [Replicate, Partial]) on a (4, 2) mesh.
// The inputs are made before the mode is entered, so the log holds the example's call alone. Each
// runs the upstream release whose format it prints: with PlacementFormat::Joined (today's upstream)
// a redistribution waits after each step, with Lists (PR 162665's) after the last
// (Note [When a redistribution waits], distributed/redistribute.h).
enum class DTensorExample { Mm, Einsum };
inline constexpr int kDTensorExampleWorld = 8;

// "mm" or "einsum"; none for any other name.
std::optional<DTensorExample> dtensor_example_named(std::string_view name);

// Runs `example` as `rank` of the fake world under a DebugMode with `options`; `then`, if set, runs
// inside the mode on the example's result (upstream's test_debug_mode_mm adds `.sum()`).
// An error if the rank is outside the world.
std::unique_ptr<DebugMode> debug_dtensor_example(DTensorExample example, const DebugModeOptions& options, int rank,
                                                 const std::function<void(const Tensor&)>& then = {});

}  // namespace strata::tracer
