// core/dtype.h: the element types strata supports and PyTorch's type promotion between them.
// Names follow PyTorch: `float32` prints as torch.float32, shorthand f32 (as DebugMode writes it).
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace strata {

enum class ScalarType : std::uint8_t { Bool, Int64, Float32, Float64 };
inline constexpr int kNumScalarTypes = 4;

constexpr std::size_t element_size(ScalarType t) {
  return t == ScalarType::Bool ? 1 : t == ScalarType::Float32 ? 4 : 8;
}
std::string_view dtype_name(ScalarType t);       // "float32"
std::string_view dtype_shorthand(ScalarType t);  // "f32", as in DebugMode logs
constexpr bool is_floating_point(ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; }
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || (include_bool && t == ScalarType::Bool);
}

// PyTorch's torch.promote_types for the four types: bool < int64 < float32 < float64. The enum is
// declared in promotion order, so the larger one wins.
constexpr ScalarType promote_types(ScalarType a, ScalarType b) {
  return static_cast<std::uint8_t>(a) > static_cast<std::uint8_t>(b) ? a : b;
}

// The C++ type of each element type, and back.
template <ScalarType T> struct CppTypeOf;
template <> struct CppTypeOf<ScalarType::Bool> { using type = bool; };
template <> struct CppTypeOf<ScalarType::Int64> { using type = std::int64_t; };
template <> struct CppTypeOf<ScalarType::Float32> { using type = float; };
template <> struct CppTypeOf<ScalarType::Float64> { using type = double; };

template <typename T> constexpr ScalarType scalar_type_of();
template <> constexpr ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <> constexpr ScalarType scalar_type_of<std::int64_t>() { return ScalarType::Int64; }
template <> constexpr ScalarType scalar_type_of<float>() { return ScalarType::Float32; }
template <> constexpr ScalarType scalar_type_of<double>() { return ScalarType::Float64; }

// Calls `fn(T{})` with the C++ type of `t`, like PyTorch's AT_DISPATCH macros but as a function.
template <typename Fn>
[[gnu::always_inline]] inline decltype(auto) visit_dtype(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Bool: return fn(bool{});
    case ScalarType::Int64: return fn(std::int64_t{});
    case ScalarType::Float32: return fn(float{});
    case ScalarType::Float64: break;
  }
  return fn(double{});
}

// The same, for floating types only; `op` names the caller in the error for other types.
void check_floating(ScalarType t, std::string_view op_detail);
template <typename Fn>
decltype(auto) visit_floating(ScalarType t, std::string_view op_detail, Fn&& fn) {
  check_floating(t, op_detail);
  if (t == ScalarType::Float32) return fn(float{});
  return fn(double{});
}

std::ostream& operator<<(std::ostream& out, ScalarType t);  // "float32"

}  // namespace strata
