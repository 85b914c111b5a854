// core/dtype.cpp: element type names, sizes and promotion.
#include "core/dtype.h"

#include "core/error.h"

namespace strata {

std::size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int64: return 8;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
  }
  return 0;
}

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

bool is_floating_point(ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; }

bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || (include_bool && t == ScalarType::Bool);
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // The enum is declared in promotion order, so the larger one wins.
  return static_cast<std::uint8_t>(a) > static_cast<std::uint8_t>(b) ? a : b;
}

void check_floating(ScalarType t, std::string_view op_detail) {
  STRATA_CHECK(is_floating_point(t), op_detail, " not implemented for '", t, "'");
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

}  // namespace strata
