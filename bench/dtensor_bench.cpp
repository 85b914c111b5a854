// bench/dtensor_bench.cpp: what a DTensor adds to an op. A 4x4 add of two Replicate DTensors on a
// 1-D fake mesh of 1, and of 8 as rank 0 (the handler, a sharding cache hit, the local add, the
// output wrapped), beside the same add of their local tensors in the same run; and, for context, an
// mm of S(0) x R on the mesh of 8 (no redistribution) beside the local mm. The target for
// the add is at most 5x. On a FakeWorld: no ranks, no threads, no communication. The same add on
// do-nothing wrappers (bench/passthrough_wrapper.h) splits the overhead: what the interposer costs
// any wrapper subclass, and what DTensor's handler adds to that (`..._vs_wrapper`). Allocations per
// add are counted for the three. Each ratio also comes as the ratio of the least batches
// (`_min_ratio`), steadier on a loaded machine.
#include "bench/dtensor_bench.h"

#include <string>

#include "bench/passthrough_wrapper.h"
#include "bench/timing.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "ops/functions.h"

namespace strata::bench {

void dtensor_benchmarks(nlohmann::ordered_json& out) {
  using namespace strata::distributed;
  for (const int world_size : {1, 8}) {
    const FakeWorld world(0, world_size);
    const DeviceMesh mesh = init_device_mesh({world_size});
    const Tensor a = randn({4, 4}), b = randn({4, 4});
    const Tensor da = distribute_tensor(a, mesh, {Replicate{}}), db = distribute_tensor(b, mesh, {Replicate{}});
    const Tensor la = to_local(da), lb = to_local(db);
    const Paired add_r = paired_median_ns([&] { keep(add(da, db)); }, [&] { keep(add(la, lb)); });
    const std::string key = "dtensor_op_overhead_add_4x4_mesh" + std::to_string(world_size);
    out[key + "_ns"] = round3(add_r.a_ns);
    out[key + "_local_ns"] = round3(add_r.b_ns);
    out[key + "_ratio"] = round3(add_r.ratio);
    out[key + "_min_ratio"] = round3(add_r.min_ratio);
    out[key + "_allocs"] = allocations_per_call([&] { keep(add(da, db)); });
    if (world_size == 1) {
      const Tensor wa = PassThroughWrapper::wrap(la), wb = PassThroughWrapper::wrap(lb);
      const Paired wrap_r = paired_median_ns([&] { keep(add(wa, wb)); }, [&] { keep(add(la, lb)); });
      const Paired vs_r = paired_median_ns([&] { keep(add(da, db)); }, [&] { keep(add(wa, wb)); });
      out["wrapper_op_overhead_add_4x4_ns"] = round3(wrap_r.a_ns);
      out["wrapper_op_overhead_add_4x4_local_ns"] = round3(wrap_r.b_ns);
      out["wrapper_op_overhead_add_4x4_ratio"] = round3(wrap_r.ratio);
      out["wrapper_op_overhead_add_4x4_min_ratio"] = round3(wrap_r.min_ratio);
      out["wrapper_op_overhead_add_4x4_allocs"] = allocations_per_call([&] { keep(add(wa, wb)); });
      out["local_add_4x4_allocs"] = allocations_per_call([&] { keep(add(la, lb)); });
      out[key + "_vs_wrapper"] = round3(vs_r.ratio);
      out[key + "_vs_wrapper_min_ratio"] = round3(vs_r.min_ratio);
    }
    if (world_size != 8) continue;
    const Tensor x = distribute_tensor(randn({64, 32}), mesh, {Shard{0}});
    const Tensor w = distribute_tensor(randn({32, 16}), mesh, {Replicate{}});
    const Tensor lx = to_local(x), lw = to_local(w);
    const Paired mm_r = paired_median_ns([&] { keep(mm(x, w)); }, [&] { keep(mm(lx, lw)); });
    out["dtensor_mm_s0_r_64x32x16_mesh8_ns"] = round3(mm_r.a_ns);
    out["dtensor_mm_s0_r_64x32x16_mesh8_local_ns"] = round3(mm_r.b_ns);
    out["dtensor_mm_s0_r_64x32x16_mesh8_ratio"] = round3(mm_r.ratio);
  }
}

}  // namespace strata::bench
