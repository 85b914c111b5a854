// tests/fuzz/api_bytes.h: the API fuzzer's byte reader and the value classes it draws from (sizes,
// integers, doubles, dtypes), so a mutated byte moves between meaningful values: small sizes, 0, 1,
// sizes that overflow, NaN and infinities. A byte at or above kExplicit is followed by the exact value
// (how the readable seeds in tests/fuzz/api_seeds/ spell 2^31 or 1e300). Past the end it reads zeros.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "core/dtype.h"

namespace strata::fuzz {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  std::uint8_t u8() { return p_ == end_ ? 0 : *p_++; }
  std::size_t pick(std::size_t n) { return u8() % n; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() {
    const std::uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string_view bytes(std::size_t n) {
    const std::size_t k = n < static_cast<std::size_t>(end_ - p_) ? n : static_cast<std::size_t>(end_ - p_);
    const std::string_view s(reinterpret_cast<const char*>(p_), k);
    p_ += k;
    return s;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// A class byte at or above this is followed by the exact value (8 bytes, little-endian).
inline constexpr std::uint8_t kExplicit = 0xF8;
// Class bytes from here to kExplicit pick a huge or negative value.
inline constexpr std::uint8_t kHuge = 0xE0;

inline std::int64_t huge_value(std::uint8_t b) {
  constexpr std::int64_t kTable[] = {std::int64_t{1} << 31, (std::int64_t{1} << 31) - 1, std::int64_t{1} << 32,
                                     std::int64_t{1} << 40, std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max(),
                                     -1, -2, std::numeric_limits<std::int64_t>::min(), (std::int64_t{1} << 33) + 1,
                                     std::int64_t{3} << 61, std::int64_t{1} << 20};
  return kTable[b % (sizeof kTable / sizeof kTable[0])];
}

// A dimension size: mostly 0 to 7 and 16, sometimes huge or negative.
inline std::int64_t size_value(ByteReader& r) {
  const std::uint8_t b = r.u8();
  if (b >= kExplicit) return r.i64();
  if (b >= kHuge) return huge_value(b);
  constexpr std::int64_t kSmall[] = {2, 3, 1, 0, 4, 5, 7, 16, 1, 2, 3, 6};
  return kSmall[b % (sizeof kSmall / sizeof kSmall[0])];
}

// An integer argument: mostly -4 to 11, sometimes huge or negative.
inline std::int64_t int_value(ByteReader& r) {
  const std::uint8_t b = r.u8();
  if (b >= kExplicit) return r.i64();
  if (b >= kHuge) return huge_value(b);
  return static_cast<std::int64_t>(b % 16) - 4;
}

inline double double_value(ByteReader& r) {
  const std::uint8_t b = r.u8();
  if (b >= kExplicit) return r.f64();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kTable[] = {0.0, 1.0, -1.0, 0.5, 2.0, -2.5, std::numeric_limits<double>::quiet_NaN(), kInf, -kInf,
                               1e30, -1e30, 1e-310, 3.0, 100.0, -0.0, 1e19};
  return kTable[b % (sizeof kTable / sizeof kTable[0])];
}

// Floating types most often: they are the ones autograd and most kernels care about. The bytes from
// 0xF0 give the one-byte types int8 and float8_e4m3fn, those from 0xE0 the two-byte float16 and
// bfloat16 (added later: the bytes below keep their meaning).
inline ScalarType dtype_value(std::uint8_t b) {
  if (b >= 0xF0) return b % 2 == 0 ? ScalarType::Int8 : ScalarType::Float8_e4m3fn;
  if (b >= 0xE0) return b % 2 == 0 ? ScalarType::Float16 : ScalarType::BFloat16;
  constexpr ScalarType kTable[] = {ScalarType::Float32, ScalarType::Float64, ScalarType::Int64, ScalarType::Bool,
                                   ScalarType::Float32, ScalarType::Float64, ScalarType::Float64, ScalarType::Float32};
  return kTable[b % 8];
}

}  // namespace strata::fuzz
