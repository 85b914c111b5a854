// core/dtype.cpp: element type names and the floating-type check.
#include "core/dtype.h"

#include <iterator>

#include "core/util/error.h"

namespace strata {

namespace {

// Each dtype's names, in ScalarType's order.
struct DtypeNames {
  ScalarType type;
  std::string_view name;       // "float32"
  std::string_view shorthand;  // "f32"
  std::string_view c10_name;   // "Float"
};
constexpr DtypeNames kNames[] = {
    {ScalarType::Bool, "bool", "b8", "Bool"},
    {ScalarType::Int64, "int64", "i64", "Long"},
    {ScalarType::Float32, "float32", "f32", "Float"},
    {ScalarType::Float64, "float64", "f64", "Double"},
    {ScalarType::Int8, "int8", "i8", "Char"},
    {ScalarType::Float8_e4m3fn, "float8_e4m3fn", "f8e4m3fn", "Float8_e4m3fn"},
    {ScalarType::Float16, "float16", "f16", "Half"},
    {ScalarType::BFloat16, "bfloat16", "bf16", "BFloat16"},
};
static_assert(std::size(kNames) == static_cast<std::size_t>(kNumScalarTypes), "a dtype without names");
static_assert([] {
  for (std::size_t i = 0; i < std::size(kNames); ++i)
    if (static_cast<std::size_t>(kNames[i].type) != i) return false;
  return true;
}(), "kNames is not in ScalarType's order");

// A value outside the enum (read from corrupt bytes) is named "?".
const DtypeNames& names_of(ScalarType t) {
  static constexpr DtypeNames unknown{ScalarType::Bool, "?", "?", "?"};
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kNames) ? kNames[i] : unknown;
}

}  // namespace

std::string_view dtype_name(ScalarType t) { return names_of(t).name; }
std::string_view dtype_shorthand(ScalarType t) { return names_of(t).shorthand; }
std::string_view dtype_c10_name(ScalarType t) { return names_of(t).c10_name; }

namespace detail {
void throw_float8_promotion(ScalarType a, ScalarType b) {
  throw_error(str_cat("Promotion for Float8 Types is not supported, attempted to promote ", dtype_c10_name(a), " and ",
                      dtype_c10_name(b)));
}
void throw_dtype_not_implemented(ScalarType t) { throw_error(str_cat("not implemented for '", dtype_c10_name(t), "'")); }
}  // namespace detail

void check_floating(ScalarType t, std::string_view op_detail) {
  STRATA_CHECK(is_floating_point(t) && !is_float8(t), op_detail, " not implemented for '", dtype_c10_name(t), "'");
}
void check_computed_floating(ScalarType t, std::string_view op_detail) {
  STRATA_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64, op_detail, " not implemented for '", dtype_c10_name(t), "'");
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

}  // namespace strata
