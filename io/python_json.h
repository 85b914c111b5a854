// io/python_json.h: JSON text as Python's json.dumps writes it where that differs from
// nlohmann::json: non-finite floats. The reference scripts (scripts/reference/) write NaN, Infinity
// and -Infinity, which Python's json.load reads back; nlohmann would write null, which reads as None.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace strata::tracer {

// Compact JSON (no spaces), as nlohmann's dump(), but NaN -> NaN, +inf -> Infinity, -inf -> -Infinity.
// Note: strict JSON parsers (nlohmann included) reject those three tokens; Python accepts them.
std::string dump_python_json(const nlohmann::ordered_json& j);

}  // namespace strata::tracer
