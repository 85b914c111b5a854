// ops/native/matvec_dots.h: one float row times a column-major matrix (a decoding step's x @ w.t())
// as small_gemm_dots over blocks of columns split across strata's threads; linalg_ops.cpp's gemm
// calls it for one-row float products whose right operand has unit-stride columns.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../core/parallel.h"
#include "small_gemm.h"

namespace strata::ops {

#if defined(__AVX2__) && defined(__FMA__)
// Note [Matrix-vector products split their columns over threads]
// A one-row product by a column-major b (a decoding step's x @ w.t(), with w row-major as checkpoints
// store it) is a matrix-vector product: one multiply-add per weight, each weight read once, so its
// speed is the memory bandwidth's. Eigen runs it as a single-threaded GEMV. Here small_gemm_dots
// computes it with b's columns split over strata's threads in blocks of eight (run.c splits its
// output rows over OpenMP the same way). A column's sum does not depend on the split: blocks start at
// multiples of eight, so every column is summed in the same group of eight (or in the same tail) at
// any thread count, and the result is the same at every thread count. Blocks go to threads only past
// kMatvecParallelMacs multiply-adds (4 MiB of weights, a Llama classifier but not its layers'
// products): each parallel region waits for every thread to be scheduled, and on a loaded machine
// that wait (milliseconds) cost more than splitting the 42 smaller products per token saved
// (measured with strata-bench's lm group, docs/testing.md).
inline constexpr std::int64_t kMatvecParallelMacs = std::int64_t{1} << 20;

// out[0 .. p) = alpha * x @ b (or += when `accumulate`): x is k contiguous floats, column j of b is
// the k contiguous floats at b + j * bs1; k a positive multiple of 8.
inline void matvec_dots(float* out, const float* x, const float* b, std::int64_t bs1, std::int64_t k, std::int64_t p,
                        float alpha, bool accumulate) {
  parallel_for(0, (p + 7) / 8, std::max<std::int64_t>(1, kMatvecParallelMacs / (8 * k)),
               [&](std::int64_t begin, std::int64_t end) {
                 const std::int64_t j0 = begin * 8, j1 = std::min(p, end * 8);
                 small_gemm_dots(out + j0, x, 0, b + j0 * bs1, bs1, 1, k, j1 - j0, alpha, accumulate);
               });
}
#endif

}  // namespace strata::ops
