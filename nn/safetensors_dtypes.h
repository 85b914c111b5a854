// nn/safetensors_dtypes.h: the safetensors format's names for strata's element types, shared by the
// loader (safetensors_load.cpp) and the writer (safetensors_save.cpp). Internal to nn/.
#pragma once

#include "../core/dtype.h"

namespace strata::safetensors {

struct DtypeName {
  const char* name;
  ScalarType type;
};
// In the crate's Dtype order (ascending alignment): the writer sorts by it, descending.
// F16 and BF16 are IEEE binary16 and bfloat16, little-endian, as strata stores float16 and bfloat16.
inline constexpr DtypeName kDtypes[] = {
    {"BOOL", ScalarType::Bool},   {"I8", ScalarType::Int8},         {"F8_E4M3", ScalarType::Float8_e4m3fn},
    {"F16", ScalarType::Float16}, {"BF16", ScalarType::BFloat16},   {"F32", ScalarType::Float32},
    {"F64", ScalarType::Float64}, {"I64", ScalarType::Int64}};
// Dtypes of the format that strata has no element type for.
inline constexpr const char* kForeignDtypes[] = {"F4",  "F6_E2M3", "F6_E3M2", "U8",  "F8_E5M2", "F8_E8M0",
                                                 "I16", "U16",     "I32",     "U32", "C64",     "U64"};

}  // namespace strata::safetensors
