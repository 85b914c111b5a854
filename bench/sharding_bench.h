// bench/sharding_bench.h: strata-bench's sharding propagation figures (bench/sharding_bench.cpp).
#pragma once

#include <nlohmann/json.hpp>

namespace strata::bench {

// The cached sharding propagation: a repeated call's lookup, beside a hash-map lookup of a plain key.
void sharding_benchmarks(nlohmann::ordered_json& out);

}  // namespace strata::bench
