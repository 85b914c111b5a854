// tracer/cli/run_header.h: the header object every JSON output of strata-trace carries, so a file says
// what produced it: strata's version, the build (type, optimization, NDEBUG, -march=native,
// sanitizers, compiler), the intra-op thread count and the run's seed.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace strata::tracer {

// {"strata_version": "0.1.0", "build_type": "release", "optimization": "3", "ndebug": true,
//  "march_native": true, "sanitizers": "none", "compiler": "gcc 12.2.0", "num_threads": 2, "seed": 0}
nlohmann::ordered_json run_header(std::uint64_t seed);
// `document` (an object) with {"header": run_header(seed)} as its first member.
nlohmann::ordered_json with_run_header(const nlohmann::ordered_json& document, std::uint64_t seed);

}  // namespace strata::tracer
