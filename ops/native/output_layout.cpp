// ops/native/output_layout.cpp: TensorIterator's dimension ordering for fresh outputs.
#include "ops/native/output_layout.h"

#include <algorithm>

#include "ops/native/elementwise.h"

namespace strata::ops {

// Note [Outputs follow their inputs' layout]
// A pointwise op's output is dense, but its dimensions are ordered from the innermost outwards by
// how the inputs lay them out: PyTorch's TensorIterator sorts dimensions by each input's strides in
// turn (the first input with a strict preference decides; a broadcast dimension, stride 0, has no
// preference; equal strides put the smaller dimension inside), starting from row-major order and
// with an insertion sort that keeps the order where no input cares. When every input is contiguous
// the answer is row-major, which is checked first (inline, in the header) so a tiny op pays one
// flag test per input. The same rule, with one operand, is empty_like's preserve_format for a tensor
// that is not already dense (PyTorch's infer_dense_strides).
DimVector permuted_output_strides(IntArrayRef shape, std::initializer_list<const Tensor*> operands) {
  const std::size_t ndim = shape.size();
  // An empty output is contiguous, as TensorIterator makes it (and the strides' product could overflow).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return {};

  std::array<DimVector, 3> strides;  // pointwise ops have at most three inputs
  STRATA_INTERNAL_ASSERT(operands.size() <= strides.size(), "output_strides takes at most three operands");
  std::size_t k = 0;
  for (const Tensor* t : operands) strides[k++] = broadcast_strides(*t, shape);

  // perm[0] is the innermost dimension; start from row-major (ndim-1, ..., 0).
  DimVector perm(ndim, 0);
  for (std::size_t i = 0; i < ndim; ++i) perm[i] = static_cast<std::int64_t>(ndim - 1 - i);
  // > 0: dimension d0 belongs outside d1; < 0: inside; 0: no input cares.
  auto should_swap = [&](std::int64_t d0, std::int64_t d1) {
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const std::int64_t s0 = strides[i][d0], s1 = strides[i][d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (std::size_t i = 1; i < ndim; ++i) {
    std::size_t d1 = i;
    for (std::size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool row_major = true;
  for (std::size_t i = 0; i < ndim; ++i) row_major = row_major && perm[i] == static_cast<std::int64_t>(ndim - 1 - i);
  if (row_major) return {};
  // Each stride is the product of the sizes inside it (0 past a size-0 dimension, as TensorIterator
  // computes them); one that overflows is PyTorch's contiguous-stride error, before the output's
  // size check would refuse the shape.
  DimVector out(ndim, 0);
  std::int64_t stride = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < ndim; ++i) {
    out[perm[i]] = stride;
    if (i + 1 < ndim) overflow |= mul_overflows(stride, shape[perm[i]], &stride);
  }
  STRATA_CHECK(!overflow, "Stride calculation overflowed");
  return out;
}

}  // namespace strata::ops
