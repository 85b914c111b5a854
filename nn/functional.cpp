// nn/functional.cpp: the composites (aten/src/ATen/native/Linear.cpp, LossNLL.cpp, SoftMax.cpp).
#include "nn/functional.h"

#include "core/interposer.h"

#include "ops/functions.h"

namespace strata::nn::functional {

Tensor matmul(const Tensor& input, const Tensor& other) {
  STRATA_CHECK(other.dim() == 2, "matmul: strata supports a 2-D second operand, got ", other.dim(), "-D");
  STRATA_CHECK(input.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ", input.dim(), "D and ",
               other.dim(), "D");
  if (input.dim() == 2) return mm(input, other);
  if (input.dim() == 1) return squeeze(mm(unsqueeze(input, 0), other), 0);
  // Fold the leading dimensions into rows, multiply, unfold (PyTorch's _matmul_impl for N-D @ 2-D).
  DimVector out_sizes(input.sizes());
  out_sizes.back() = other.size(1);
  const Tensor folded = reshape(input, {-1, input.size(-1)});
  return view(mm(folded, other), out_sizes);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, t(weight));
  if (bias.defined() && input.is_contiguous() && bias.dim() == 1) {
    std::int64_t rows = 1;
    for (std::int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
    const Tensor flat = reshape(input, {rows, input.size(-1)});  // before t(weight), as PyTorch orders them
    const Tensor result = addmm(bias, flat, t(weight));
    DimVector out_sizes(input.sizes());
    out_sizes.back() = result.size(1);
    return view(result, out_sizes);
  }
  Tensor output = matmul(input, t(weight));
  if (bias.defined()) {  // in place, unless a mode or subclass should see a functional add (as PyTorch)
    if (is_tensor_subclass_like(bias)) output = add(output, bias);
    else add_(output, bias);
  }
  return output;
}

Tensor relu(const Tensor& input) { return strata::relu(input); }

Tensor log_softmax(const Tensor& input, std::int64_t dim, std::optional<ScalarType> dtype) {
  return _log_softmax(dtype ? to(input, *dtype) : input, dim, false);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const LossOptions& options) {
  STRATA_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  STRATA_CHECK(input.dim() <= 2, "nll_loss: strata supports 1-D and 2-D input (got ", input.dim(), "-D)");
  STRATA_CHECK(input.dim() == 1 || target.dim() == 0 || input.size(0) == target.size(0), "Expected input batch_size (",
               input.size(0), ") to match target batch_size (", target.dim() > 0 ? target.size(0) : 1, ").");
  return std::get<0>(nll_loss_forward(input, target, options.weight, static_cast<std::int64_t>(options.reduction),
                                      options.ignore_index));
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const LossOptions& options) {
  STRATA_CHECK(is_integral(target.dtype(), /*include_bool=*/false),
               "cross_entropy: strata supports class-index (int64) targets, got ", target.dtype(),
               " (class probabilities are not supported)");
  const std::int64_t class_dim = input.dim() == 1 ? 0 : 1;
  return nll_loss(log_softmax(input, class_dim, input.dtype()), target, options);
}

}  // namespace strata::nn::functional
