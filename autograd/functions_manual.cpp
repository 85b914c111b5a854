// autograd/functions_manual.cpp: helper formulas (see the header).
#include "autograd/functions_manual.h"

#include "ops/functions.h"

namespace strata::autograd {

Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, IntArrayRef mat1_sizes, IntArrayRef mat1_strides,
                        const Scalar& alpha) {
  if (mat1_strides[0] == 1 && mat1_strides[1] == mat1_sizes[0]) {
    return maybe_multiply(t(mm(mat2, t(grad))), alpha);
  }
  return maybe_multiply(mm(grad, t(mat2)), alpha);
}

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef mat2_sizes, IntArrayRef mat2_strides,
                        const Scalar& alpha) {
  if (mat2_strides[0] == 1 && mat2_strides[1] == mat2_sizes[0]) {
    return maybe_multiply(t(mm(t(grad), mat1)), alpha);
  }
  return maybe_multiply(mm(t(mat1), grad), alpha);
}

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim) {
  if (!keepdim && !sizes.empty() && dims && !dims->empty()) {
    SmallVector<bool, 5> reduced(sizes.size(), false);
    for (std::int64_t d : *dims) reduced[static_cast<std::size_t>(wrap_dim(d, static_cast<std::int64_t>(sizes.size())))] = true;
    Tensor res = grad;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      if (reduced[i]) res = unsqueeze(res, static_cast<std::int64_t>(i));
    return expand(res, sizes);
  }
  return expand(grad, sizes);
}

Tensor unsqueeze_to(const Tensor& grad, std::int64_t dim, IntArrayRef sizes) {
  if (sizes.empty()) return grad;
  const auto d = static_cast<std::size_t>(wrap_dim(dim, static_cast<std::int64_t>(sizes.size())));
  return sizes[d] == 1 ? unsqueeze(grad, static_cast<std::int64_t>(d)) : grad;
}

}  // namespace strata::autograd
