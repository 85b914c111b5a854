// core/dtype.cpp: element type names and the floating-type check.
#include "core/dtype.h"

#include "core/error.h"

namespace strata {

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
  }
  return "?";
}

std::string_view dtype_shorthand(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "b8";
    case ScalarType::Int64: return "i64";
    case ScalarType::Float32: return "f32";
    case ScalarType::Float64: return "f64";
  }
  return "?";
}

void check_floating(ScalarType t, std::string_view op_detail) {
  STRATA_CHECK(is_floating_point(t), op_detail, " not implemented for '", t, "'");
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

}  // namespace strata
