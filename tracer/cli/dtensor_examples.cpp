// tracer/cli/dtensor_examples.cpp: the DTensor DebugMode pull request's two programs on real DTensors
// over a fake world (Note [The DTensor examples]).
#include "tracer/cli/dtensor_examples.h"

#include "core/generator.h"
#include "distributed/device_mesh.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/redistribute.h"
#include "ops/einsum.h"
#include "ops/functions.h"

namespace strata::tracer {

std::optional<DTensorExample> dtensor_example_named(std::string_view name) {
  if (name == "mm") return DTensorExample::Mm;
  if (name == "einsum") return DTensorExample::Einsum;
  return std::nullopt;
}

std::unique_ptr<DebugMode> debug_dtensor_example(DTensorExample example, const DebugModeOptions& options, int rank,
                                                 const std::function<void(const Tensor&)>& then) {
  using distributed::DTensor, distributed::Partial, distributed::Replicate, distributed::Shard;
  STRATA_CHECK(rank >= 0 && rank < kDTensorExampleWorld, "debug_dtensor_example: rank ", rank,
               " is outside the world of ", kDTensorExampleWorld);
  const distributed::FakeWorld world(rank, kDTensorExampleWorld);
  manual_seed(0);
  Tensor a, b;
  if (example == DTensorExample::Mm) {
    const distributed::DeviceMesh mesh({kDTensorExampleWorld});
    a = DTensor::from_local(randn({1, 8}), mesh, {Shard{0}});
    b = DTensor::from_local(randn({1, 32}), mesh, {Shard{0}});
  } else {
    const distributed::DeviceMesh mesh({4, 2});
    a = DTensor::from_local(randn({16, 6, 8}), mesh, {Partial{}, Replicate{}});
    b = DTensor::from_local(randn({8, 4, 4}), mesh, {Replicate{}, Partial{}});
  }
  auto mode = std::make_unique<DebugMode>(options);
  {
    // The release whose format is printed is the release whose redistribution runs.
    const distributed::RedistributeWaitGuard waits(options.placement_format == PlacementFormat::Joined
                                                       ? distributed::RedistributeWait::AfterEachStep
                                                       : distributed::RedistributeWait::AfterLastStep);
    DebugMode::Guard guard(*mode);
    const Tensor out = example == DTensorExample::Mm ? mm(a, b) : einsum("bld,dnh->blnh", {a, b});
    if (then) then(out);
  }
  return mode;
}

}  // namespace strata::tracer
