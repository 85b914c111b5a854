// tracer/cli/run_header.cpp: the header's build facts come from tracer/cli/strata_build_info.h, which
// tracer/meson.build generates from the project's version and options.
#include "tracer/cli/run_header.h"

#include "core/parallel.h"
#include "tracer/cli/strata_build_info.h"

namespace strata::tracer {

nlohmann::ordered_json run_header(std::uint64_t seed) {
  nlohmann::ordered_json h;
  h["strata_version"] = STRATA_VERSION;
  h["build_type"] = STRATA_BUILD_TYPE;
  h["optimization"] = STRATA_OPTIMIZATION;
#ifdef NDEBUG
  h["ndebug"] = true;
#else
  h["ndebug"] = false;
#endif
  h["march_native"] = STRATA_MARCH_NATIVE != 0;
  h["sanitizers"] = STRATA_SANITIZE;
  h["compiler"] = STRATA_COMPILER;
  h["num_threads"] = get_num_threads();
  h["seed"] = seed;
  return h;
}

nlohmann::ordered_json with_run_header(const nlohmann::ordered_json& document, std::uint64_t seed) {
  nlohmann::ordered_json out;
  out["header"] = run_header(seed);
  for (auto it = document.begin(); it != document.end(); ++it) out[it.key()] = it.value();
  return out;
}

}  // namespace strata::tracer
