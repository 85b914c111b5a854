// nn/functional.h: torch.nn.functional for MLPs. These are composites: they call dispatched ops and
// never reach the dispatcher themselves, exactly as PyTorch's CompositeImplicitAutograd functions,
// so a dispatch mode sees t + addmm for a 2-D linear, _log_softmax + nll_loss_forward for
// cross_entropy. Each announces itself to the function modes first (torch.nn.functional.linear...;
// matmul as torch.matmul), so a function mode sees the call and not what it decomposes into.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/tensor.h"
#include "../ops/torch_function.h"

namespace strata::nn::functional {

enum class Reduction : std::int64_t { None = 0, Mean = 1, Sum = 2 };

// y = input @ weight^T + bias. 2-D input with bias: addmm(bias, input, weight.t()); a contiguous 3-D
// input with bias, or a contiguous input of another rank with a 1-D bias, is flattened to 2-D and
// back; otherwise matmul, then an add of the bias.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
// input @ other, as torch.matmul: 2-D products, N-D operands folded into one mm or broadcast into
// one bmm (Note [matmul runs PyTorch's _matmul_impl], nn/functional.cpp); 1-D operands take dot, mv,
// or unsqueeze, mm and squeeze, as PyTorch's.
Tensor matmul(const Tensor& input, const Tensor& other);
Tensor relu(const Tensor& input);
Tensor log_softmax(const Tensor& input, std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

Tensor gelu(const Tensor& input, std::string_view approximate = "none");
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
Tensor softmax(const Tensor& input, std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// F.dropout(input, p, training): p outside [0, 1] is refused; the input itself when !training.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// F.embedding(input, weight, padding_idx): rows of weight picked by int64 indices; padding_idx (which
// may count from the end) gets no gradient.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx = std::nullopt);
// F.embedding's and nn.Embedding's check of padding_idx, made non-negative.
std::optional<std::int64_t> embedding_padding_idx(std::optional<std::int64_t> padding_idx, std::int64_t num_embeddings);

// LibTorch's F::LayerNormFuncOptions: normalized_shape, and the weight, bias and eps setters.
struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<std::int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT: implicit, as LibTorch's
  LayerNormFuncOptions& weight(Tensor w) { weight_ = std::move(w); return *this; }
  LayerNormFuncOptions& bias(Tensor b) { bias_ = std::move(b); return *this; }
  LayerNormFuncOptions& eps(double e) { eps_ = e; return *this; }
  const std::vector<std::int64_t>& normalized_shape() const { return normalized_shape_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  std::vector<std::int64_t> normalized_shape_;
  Tensor weight_, bias_;
  double eps_ = 1e-5;
};
// F.layer_norm: native_layer_norm's output over the trailing dimensions normalized_shape.
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);

// LibTorch's F::PadFuncOptions for the constant mode, the only one strata has: the pads ((before,
// after) pairs, the last dimension's first; negative ones crop) and the value (0 unless set).
struct PadFuncOptions {
  PadFuncOptions(std::vector<std::int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit, as LibTorch's
  PadFuncOptions& value(double v) { value_ = v; return *this; }
  const std::vector<std::int64_t>& pad() const { return pad_; }
  std::optional<double> value() const { return value_; }

 private:
  std::vector<std::int64_t> pad_;
  std::optional<double> value_;
};
// F.pad in constant mode: PyTorch's aten::pad, which dispatches constant_pad_nd(input, pad, value or 0).
Tensor pad(const Tensor& input, const PadFuncOptions& options);

struct LossOptions {
  Tensor weight;                          // per-class weight, or undefined
  Reduction reduction = Reduction::Mean;
  std::int64_t ignore_index = -100;
};
// Class-index targets: input [N, C] or [C], target [N] or [] (int64).
Tensor nll_loss(const Tensor& input, const Tensor& target, const LossOptions& options = {});
Tensor cross_entropy(const Tensor& input, const Tensor& target, const LossOptions& options = {});

}  // namespace strata::nn::functional

namespace strata {
// x.matmul(w): declared on Tensor (Note [Tensor methods are defined in ops], ops/tensor_methods.h).
inline Tensor Tensor::matmul(const Tensor& other) const {
  STRATA_TORCH_METHOD(matmul, "self, other", other);
  return nn::functional::matmul(*this, other);
}
inline Tensor Tensor::log_softmax(std::int64_t dim, std::optional<ScalarType> dtype) const {
  STRATA_TORCH_METHOD(log_softmax, "self, dim, [dtype]", dim, dtype);
  return nn::functional::log_softmax(*this, dim, dtype);
}
}  // namespace strata
