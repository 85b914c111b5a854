// core/dtype.cpp: element type names and the floating-type check.
#include "core/dtype.h"

#include "core/util/error.h"

namespace strata {

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    case ScalarType::Int8: return "int8";
    case ScalarType::Float8_e4m3fn: return "float8_e4m3fn";
  }
  return "?";
}

std::string_view dtype_shorthand(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "b8";
    case ScalarType::Int64: return "i64";
    case ScalarType::Float32: return "f32";
    case ScalarType::Float64: return "f64";
    case ScalarType::Int8: return "i8";
    case ScalarType::Float8_e4m3fn: return "f8e4m3fn";
  }
  return "?";
}

std::string_view dtype_c10_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    case ScalarType::Int8: return "Char";
    case ScalarType::Float8_e4m3fn: return "Float8_e4m3fn";
  }
  return "?";
}

namespace detail {
void throw_float8_promotion(ScalarType a, ScalarType b) {
  throw_error(str_cat("Promotion for Float8 Types is not supported, attempted to promote ", dtype_c10_name(a), " and ",
                      dtype_c10_name(b)));
}
void throw_dtype_not_implemented(ScalarType t) { throw_error(str_cat("not implemented for '", dtype_c10_name(t), "'")); }
}  // namespace detail

void check_floating(ScalarType t, std::string_view op_detail) {
  STRATA_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64, op_detail, " not implemented for '", dtype_c10_name(t), "'");
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

}  // namespace strata
