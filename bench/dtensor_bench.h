// bench/dtensor_bench.h: strata-bench's DTensor op overhead (bench/dtensor_bench.cpp).
#pragma once

#include <nlohmann/json.hpp>

namespace strata::bench {

// A small op on Replicate DTensors on one rank (fake group) beside the same op on their local tensors.
void dtensor_benchmarks(nlohmann::ordered_json& out);

}  // namespace strata::bench
