// modes/scaled_groups_kernel.h: the inner kernel of runq.c's grouped int8 product (scaled_groups.h's
// matmul): quantized activations times grouped int8 weight rows, for a range of output rows. One
// implementation is chosen at compile time from the instruction sets the build targets (Note [The
// grouped product's kernel], scaled_groups_kernel.cpp); all give the same bits.
#pragma once

#include <cstdint>

namespace strata::tracer::scaled_groups {

// The operands of one product, all contiguous row-major host memory:
//   x  int8 [n, k], every value in [-127, 127] (quantize_activations clamps there); xs float32 [n, k / group]
//   w  int8 [m, k] (any int8 value);                                                ws float32 [m, k / group]
//   out float32 [n, m]
struct GroupedOperands {
  const std::int8_t* x;
  const float* xs;
  const std::int8_t* w;
  const float* ws;
  float* out;
  std::int64_t n, m, k, group;
};

// out[t, i] for every t < n and output rows begin <= i < end: the sum over groups g, in order, of
// float(int32 dot of group g) * ws[i, g] * xs[t, g], in float32 (runq.c's matmul, to the bit).
void product_rows(const GroupedOperands& p, std::int64_t begin, std::int64_t end);

// The same with plain loops and no vector code: the definition product_rows is tested against.
void product_rows_reference(const GroupedOperands& p, std::int64_t begin, std::int64_t end);

// The implementation product_rows runs for this group size: "avx512-vnni", "avx-vnni", "avx2" or
// "scalar" (strata-bench prints it beside the int8 figures).
const char* product_kernel_name(std::int64_t group);

}  // namespace strata::tracer::scaled_groups
