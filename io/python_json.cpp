// io/python_json.cpp: nlohmann::json's compact dump with Python's spelling of non-finite floats.
#include "io/python_json.h"

#include <cmath>

namespace strata::tracer {

namespace {

void dump_to(const nlohmann::ordered_json& j, std::string& out) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : j.items()) {
        if (!first) out += ',';
        first = false;
        out += nlohmann::ordered_json(key).dump();
        out += ':';
        dump_to(value, out);
      }
      out += '}';
      return;
    }
    case nlohmann::ordered_json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& value : j) {
        if (!first) out += ',';
        first = false;
        dump_to(value, out);
      }
      out += ']';
      return;
    }
    case nlohmann::ordered_json::value_t::number_float: {
      const double v = j.get<double>();
      if (std::isnan(v)) out += "NaN";  // json.dumps(float("nan")), whatever the sign bit
      else if (std::isinf(v)) out += v > 0 ? "Infinity" : "-Infinity";
      else out += j.dump();
      return;
    }
    default:
      out += j.dump();
  }
}

}  // namespace

std::string dump_python_json(const nlohmann::ordered_json& j) {
  std::string out;
  dump_to(j, out);
  return out;
}

}  // namespace strata::tracer
