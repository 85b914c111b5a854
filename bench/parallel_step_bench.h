// bench/parallel_step_bench.h: strata-bench's MLP step on 2 thread ranks, data-parallel and
// tensor-parallel (bench/parallel_step_bench.cpp).
#pragma once

#include <nlohmann/json.hpp>

namespace strata::bench {

// The seed's step (16-32-4, batch 8) under DistributedDataParallel (each rank on half the batch) and
// under parallelize_module's colwise/rowwise plan (each rank on the whole batch and half of each
// layer), beside `one_process_us`, the one-process step measured in the same run.
void parallel_step_benchmarks(nlohmann::ordered_json& out, double one_process_us);

}  // namespace strata::bench
