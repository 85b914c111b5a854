// ops/native/embedding_ops.cpp: embedding (rows of a 2-D weight picked by int64 indices, of any shape) and
// embedding_dense_backward (the rows' gradients summed back into a [num_weights, D] gradient,
// skipping padding_idx, optionally scaled by 1 / the index's frequency), as PyTorch's CPU kernels.
// An index outside [0, num_weights) is refused with index_select's words, forward and backward.
#include <vector>

#include "core/util/checked_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"

namespace strata::ops {

namespace {

void check_indices(const Tensor& indices, std::string_view op) {
  STRATA_CHECK(indices.dtype() == ScalarType::Int64,
               "Expected tensor for argument #", op == "embedding" ? 1 : 2,
               " 'indices' to have one of the following scalar types: int64; but got ", indices.dtype(),
               " instead (while checking arguments for ", op, ")");
}

std::int64_t checked_index(std::int64_t k, std::int64_t rows) {
  STRATA_CHECK(k >= 0 && k < rows, "index out of range in self");
  return k;
}

// ---- embedding: out[i..., :] = weight[indices[i...], :] ----
TensorSpec embedding_meta(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx, bool scale_grad_by_freq,
                          bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they only change the backward
  STRATA_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_indices(indices, "embedding");
  DimVector sizes(indices.sizes());
  sizes.push_back(weight.sizes()[1]);
  return {std::move(sizes), weight.dtype(), {}};
}

void embedding_cpu(const Tensor& out, const Tensor& weight, const Tensor& indices, std::int64_t, bool, bool) {
  const std::int64_t rows = weight.sizes()[0], width = weight.sizes()[1], n = indices.numel();
  const Operand idx_t = Operand::contiguous(indices);  // Note [Operands are read where they are]
  const std::int64_t* idx = data_of<std::int64_t>(*idx_t);
  for (std::int64_t i = 0; i < n; ++i) checked_index(idx[i], rows);  // all checked before any is read
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const std::int64_t s0 = weight.strides()[0], s1 = weight.strides()[1];
  visit_dtype(weight.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* w = data_of<T>(weight);
    T* o = data_of<T>(out);
    parallel_for(0, n, std::max<std::int64_t>(1, kElementwiseGrain / width), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const T* row = w + idx[i] * s0;
        for (std::int64_t j = 0; j < width; ++j) o[i * width + j] = load_element(row + j * s1);
      }
    });
  });
}

// ---- embedding_dense_backward: grad_weight[k] = sum of grad rows whose index is k (k != padding_idx) ----
TensorSpec embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, std::int64_t num_weights,
                                         std::int64_t padding_idx, bool scale_grad_by_freq) {
  (void)padding_idx, (void)scale_grad_by_freq;
  check_indices(indices, "embedding_backward");
  check_floating(grad_output.dtype(), "\"embedding_backward\"");
  STRATA_CHECK(grad_output.dim() >= 1, "embedding_backward: expected grad_output with at least 1 dimension, got 0");
  const std::int64_t width = grad_output.sizes().back();
  std::int64_t expected = 0;
  STRATA_CHECK(!mul_overflows(indices.numel(), width, &expected) && expected == grad_output.numel(), "shape '[",
               indices.numel(), ", ", width, "]' is invalid for input of size ", grad_output.numel());
  STRATA_CHECK(num_weights >= 0, "Trying to create tensor with negative dimension ", num_weights, ": [", num_weights,
               ", ", width, "]");
  return {DimVector{num_weights, width}, grad_output.dtype(), {}};
}

void embedding_dense_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& indices,
                                  std::int64_t num_weights, std::int64_t padding_idx, bool scale_grad_by_freq) {
  const std::int64_t n = indices.numel(), width = out.sizes()[1];
  const Operand idx_t = Operand::contiguous(indices), g_t = Operand::contiguous(grad_output);
  const std::int64_t* idx = data_of<std::int64_t>(*idx_t);
  for (std::int64_t i = 0; i < n; ++i)
    if (idx[i] != padding_idx) checked_index(idx[i], num_weights);
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once] (num_weights may be huge)
  std::vector<std::int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(static_cast<std::size_t>(num_weights), 0);
    for (std::int64_t i = 0; i < n; ++i)
      if (idx[i] != padding_idx) ++counts[static_cast<std::size_t>(idx[i])];
  }
  visit_floating(out.dtype(), "embedding_dense_backward", [&](auto zero) {
    using T = decltype(zero);
    T* o = data_of<T>(out);
    std::fill(o, o + out.numel(), T(0));
    const T* g = data_of<T>(*g_t);
    // Each row of the result adds its gradient rows in index order, as PyTorch's kernel does.
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t k = idx[i];
      if (k == padding_idx) continue;
      const T scale = scale_grad_by_freq ? T(1) / static_cast<T>(counts[static_cast<std::size_t>(k)]) : T(1);
      T* row = o + k * width;
      const T* src = g + i * width;
      if (scale_grad_by_freq) {
        for (std::int64_t j = 0; j < width; ++j) row[j] += src[j] * scale;
      } else {
        for (std::int64_t j = 0; j < width; ++j) row[j] += src[j];
      }
    }
  });
}

}  // namespace

// register_embedding_ops(): the rows of embedding_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/embedding_ops_rows.inc"

}  // namespace strata::ops
