// io/python_json.cpp: nlohmann::json's compact dump with Python's spelling of non-finite floats.
#include "io/python_json.h"

#include <cmath>

namespace strata::tracer {

std::string dump_python_json(const nlohmann::ordered_json& j) {
  if (j.is_structured()) {  // an object or an array: its items, comma separated, as nlohmann's dump
    const bool object = j.is_object();
    std::string out(1, object ? '{' : '[');
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) out += ',';
      if (object) (out += nlohmann::ordered_json(it.key()).dump()) += ':';
      out += dump_python_json(*it);
    }
    return out += object ? '}' : ']';
  }
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    const double v = j.get<double>();
    if (std::isnan(v)) return "NaN";  // json.dumps(float("nan")), whatever the sign bit
    return v > 0 ? "Infinity" : "-Infinity";
  }
  return j.dump();
}

}  // namespace strata::tracer
