// core/dtype.h: the element types strata supports and PyTorch's type promotion between them.
// Names follow PyTorch: `float32` prints as torch.float32, shorthand f32 (as DebugMode writes it).
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "util/bfloat16.h"
#include "util/float16.h"
#include "util/float8.h"

namespace strata {

// Types added later come last so that the values of the earlier ones (which fuzz inputs and tests
// spell as numbers) keep their meaning.
enum class ScalarType : std::uint8_t { Bool, Int64, Float32, Float64, Int8, Float8_e4m3fn, Float16, BFloat16 };
inline constexpr int kNumScalarTypes = 8;

// LibTorch's names for the dtypes (torch::kFloat32, torch::kLong, ...), as constants.
inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kInt8 = ScalarType::Int8, kChar = ScalarType::Int8;
inline constexpr ScalarType kInt64 = ScalarType::Int64, kLong = ScalarType::Int64;
inline constexpr ScalarType kFloat32 = ScalarType::Float32, kFloat = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64, kDouble = ScalarType::Float64;
inline constexpr ScalarType kFloat8_e4m3fn = ScalarType::Float8_e4m3fn;
inline constexpr ScalarType kFloat16 = ScalarType::Float16, kHalf = ScalarType::Float16;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

constexpr std::size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: case ScalarType::Int8: case ScalarType::Float8_e4m3fn: return 1;
    case ScalarType::Float16: case ScalarType::BFloat16: return 2;
    case ScalarType::Float32: return 4;
    case ScalarType::Int64: case ScalarType::Float64: break;
  }
  return 8;
}
std::string_view dtype_name(ScalarType t);       // "float32"
std::string_view dtype_shorthand(ScalarType t);  // "f32", as in DebugMode logs
std::string_view dtype_c10_name(ScalarType t);   // "Float": c10's toString, which some of PyTorch's errors use
// float16 and bfloat16 are computed in float (Note [float16 and bfloat16 compute in float]).
constexpr bool is_reduced_float(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }
// float8_e4m3fn is a floating type, as in PyTorch (it may require grad); most kernels refuse it.
constexpr bool is_floating_point(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float8_e4m3fn || is_reduced_float(t);
}
constexpr bool is_float8(ScalarType t) { return t == ScalarType::Float8_e4m3fn; }
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || t == ScalarType::Int8 || (include_bool && t == ScalarType::Bool);
}

// PyTorch's torch.promote_types: bool < int8 < int64 < float16, bfloat16 < float32 < float64, where
// float16 with bfloat16 gives float32 (neither holds the other). float8 promotes only with itself:
// "Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and Float".
namespace detail {
constexpr int promotion_rank(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 0;
    case ScalarType::Int8: return 1;
    case ScalarType::Int64: return 2;
    case ScalarType::Float16: case ScalarType::BFloat16: return 3;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 5;
    case ScalarType::Float8_e4m3fn: break;
  }
  return 6;
}
[[noreturn]] void throw_float8_promotion(ScalarType a, ScalarType b);
}  // namespace detail
inline ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (is_float8(a) || is_float8(b)) [[unlikely]] detail::throw_float8_promotion(a, b);
  if (is_reduced_float(a) && is_reduced_float(b)) return ScalarType::Float32;
  return detail::promotion_rank(a) > detail::promotion_rank(b) ? a : b;
}

// The C++ type of each element type, and back.
template <ScalarType T> struct CppTypeOf;
template <> struct CppTypeOf<ScalarType::Bool> { using type = bool; };
template <> struct CppTypeOf<ScalarType::Int64> { using type = std::int64_t; };
template <> struct CppTypeOf<ScalarType::Float32> { using type = float; };
template <> struct CppTypeOf<ScalarType::Float64> { using type = double; };
template <> struct CppTypeOf<ScalarType::Int8> { using type = std::int8_t; };
template <> struct CppTypeOf<ScalarType::Float8_e4m3fn> { using type = Float8_e4m3fn; };
template <> struct CppTypeOf<ScalarType::Float16> { using type = Float16; };
template <> struct CppTypeOf<ScalarType::BFloat16> { using type = BFloat16; };

template <typename T> constexpr ScalarType scalar_type_of();
template <> constexpr ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <> constexpr ScalarType scalar_type_of<std::int64_t>() { return ScalarType::Int64; }
template <> constexpr ScalarType scalar_type_of<float>() { return ScalarType::Float32; }
template <> constexpr ScalarType scalar_type_of<double>() { return ScalarType::Float64; }
template <> constexpr ScalarType scalar_type_of<std::int8_t>() { return ScalarType::Int8; }
template <> constexpr ScalarType scalar_type_of<Float8_e4m3fn>() { return ScalarType::Float8_e4m3fn; }
template <> constexpr ScalarType scalar_type_of<Float16>() { return ScalarType::Float16; }
template <> constexpr ScalarType scalar_type_of<BFloat16>() { return ScalarType::BFloat16; }

namespace detail {
// "not implemented for 'Float8_e4m3fn'" (or 'Half'): a kernel reached with a type it does not compute in. The
// dispatcher prefixes the op's name (Note [Errors name the op]).
[[noreturn]] void throw_dtype_not_implemented(ScalarType t);
}  // namespace detail

// Calls `fn(T{})` with the C++ type of `t`, like PyTorch's AT_DISPATCH macros but as a function:
// the types kernels compute in. float8_e4m3fn is a storage type (Note [float8 is a storage type]):
// it gets "not implemented for 'Float8_e4m3fn'". float16 and bfloat16 reach kernels as float32 (Note
// [float16 and bfloat16 compute in float]); a kernel called around that path refuses them the same way.
template <typename Fn>
[[gnu::always_inline]] inline decltype(auto) visit_dtype(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Bool: return fn(bool{});
    case ScalarType::Int8: return fn(std::int8_t{});
    case ScalarType::Int64: return fn(std::int64_t{});
    case ScalarType::Float32: return fn(float{});
    case ScalarType::Float8_e4m3fn: case ScalarType::Float16: case ScalarType::BFloat16:
      detail::throw_dtype_not_implemented(t);
    case ScalarType::Float64: break;
  }
  return fn(double{});
}

// Note [float8 is a storage type]
// As on PyTorch's CPU, float8_e4m3fn tensors are made, moved and converted (empty, fill, copy_, to,
// clone, views, printing, item, safetensors) but not computed with: arithmetic kernels visit with
// visit_dtype, which refuses it, and _scaled_mm is the one op that reads it as numbers. Data movement
// visits with visit_all_dtypes, which adds Float8_e4m3fn (a byte with explicit float conversions,
// core/util/float8.h), Float16 and BFloat16 (core/util/float16.h, bfloat16.h); convert_element converts
// them through float, as c10 does.
template <typename Fn>
[[gnu::always_inline]] inline decltype(auto) visit_all_dtypes(ScalarType t, Fn&& fn) {
  if (t == ScalarType::Float16) [[unlikely]] return fn(Float16{});
  if (t == ScalarType::BFloat16) [[unlikely]] return fn(BFloat16{});
  if (t == ScalarType::Float8_e4m3fn) [[unlikely]] return fn(Float8_e4m3fn{});
  return visit_dtype(t, static_cast<Fn&&>(fn));
}

// An op's check of a floating input: float32, float64, float16 or bfloat16 (the last two reach its
// kernel as float32: Note [float16 and bfloat16 compute in float]); `op_detail` names the kernel in
// the error for other types, float8 included.
void check_floating(ScalarType t, std::string_view op_detail);
// A kernel's check: float32 or float64, the types it computes in.
void check_computed_floating(ScalarType t, std::string_view op_detail);
// Calls `fn(T{})` for a float32 or float64 `t`, else the error of check_computed_floating.
template <typename Fn>
decltype(auto) visit_floating(ScalarType t, std::string_view op_detail, Fn&& fn) {
  check_computed_floating(t, op_detail);
  if (t == ScalarType::Float32) return fn(float{});
  return fn(double{});
}

std::ostream& operator<<(std::ostream& out, ScalarType t);  // "float32"

}  // namespace strata
