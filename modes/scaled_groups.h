// modes/scaled_groups.h: the arithmetic of ScaledTensor's grouped int8 form (Note [ScaledTensor groups],
// scaled_tensor.h): llama2.c's Q8_0 quantization of a matrix's rows in groups of consecutive elements,
// its inverse, and the int8 x int8 matrix product runq.c computes with it, over host memory, the
// products parallel over output rows (their kernel: scaled_groups_kernel.h); every function checks
// its operands.
#pragma once

#include <cstdint>

#include "../core/tensor.h"

namespace strata::tracer::scaled_groups {

struct Quantized {
  Tensor data;    // int8 [rows, cols]
  Tensor scales;  // float32 [rows, cols / group]: value = data * scale
};

// export.py's quantize_q80 on each row of a 2-D float tensor (float32, or float64/float16/bfloat16
// converted to float32 first): per group of `group` consecutive elements, s = max|x| / 127 and
// q = round-half-even(x / s), in float32 (q = 0 where s = 0). cols must be a multiple of `group`;
// the values must be finite.
Quantized quantize_weights(const Tensor& x, std::int64_t group);

// runq.c's quantize() on each row of a float32 [rows, cols]: the same scales, q rounded half away
// from zero (C's round()). Used for the activations before every product.
Quantized quantize_activations(const Tensor& x, std::int64_t group);

// data * scales as a float32 [rows, cols] (runq.c's dequantize).
Tensor dequantize(const Tensor& data, const Tensor& scales, std::int64_t group);

// x [n, k] (float32) @ W^T with W = (data, scales) of [m, k], groups along k: out [n, m] float32.
// x is quantized per group (quantize_activations), then out[t, i] = sum over groups g, in order, of
// float(int32 dot of group g) * w_scale[i, g] * x_scale[t, g] in float32: runq.c's matmul.
Tensor matmul(const Tensor& x, const Tensor& data, const Tensor& scales, std::int64_t group);

// Rows `indices` (int64, any shape) of the dequantized matrix: [indices.sizes()..., cols] float32,
// dequantizing only those rows (aten::embedding on the grouped form).
Tensor embedding(const Tensor& data, const Tensor& scales, std::int64_t group, const Tensor& indices);

}  // namespace strata::tracer::scaled_groups
