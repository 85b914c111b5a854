// nn/functional.cpp: the composites (aten/src/ATen/native/Linear.cpp, LossNLL.cpp, SoftMax.cpp).
#include "nn/functional.h"

#include "core/interpose/interposer.h"

#include "ops/functions.h"
#include "ops/torch_function.h"

namespace strata::nn::functional {

namespace {
// The number of rows a tensor folds into when all but its last dimension are flattened.
std::int64_t leading_rows(const Tensor& input) {
  std::int64_t rows = 1;
  for (std::int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  return rows;
}
}  // namespace

// A LossOptions is F.nll_loss's and F.cross_entropy's weight, ignore_index and reduction.
void box_argument(std::vector<IValue>& out, const LossOptions& options) {
  strata::detail::box_argument(out, options.weight);
  out.emplace_back(options.ignore_index);
  constexpr std::string_view names[] = {"none", "mean", "sum"};
  out.emplace_back(names[static_cast<std::size_t>(options.reduction)]);
}
bool has_torch_function(const LossOptions& options) { return strata::detail::has_torch_function(options.weight); }
// A LayerNormFuncOptions is F.layer_norm's normalized_shape, weight, bias and eps.
void box_argument(std::vector<IValue>& out, const LayerNormFuncOptions& options) {
  out.emplace_back(IntArrayRef(options.normalized_shape()));
  strata::detail::box_argument(out, options.weight());
  strata::detail::box_argument(out, options.bias());
  out.emplace_back(options.eps());
}
// A PadFuncOptions is F.pad's pad, mode (always 'constant') and value.
void box_argument(std::vector<IValue>& out, const PadFuncOptions& options) {
  out.emplace_back(IntArrayRef(options.pad()));
  out.emplace_back(std::string_view("constant"));
  if (options.value()) out.emplace_back(*options.value());
  else out.emplace_back();
}
bool has_torch_function(const PadFuncOptions&) { return false; }
bool has_torch_function(const LayerNormFuncOptions& options) {
  return strata::detail::has_torch_function(options.weight()) || strata::detail::has_torch_function(options.bias());
}

// Note [matmul runs PyTorch's _matmul_impl]
// torch.matmul is CompositeImplicitAutograd: a mode sees only the ops it runs, and autograd their
// nodes. strata runs PyTorch 2.8's _matmul_impl (aten/src/ATen/native/LinearAlgebra.cpp) step by step,
// the transposes it takes to decide whether to fold included: 2-D @ 2-D is mm; 1-D @ 2-D is
// unsqueeze, mm, squeeze; an N-D operand with a 1-D or 2-D other is folded into a matrix for one mm
// when should_fold says so (the smaller operand requires grad, or the fold is a view); otherwise the
// batch dimensions are broadcast, expanded and reshaped to [batch, n, m] for one bmm, whose product
// _unsafe_view gives its shape. 1-D @ 1-D is dot and 2-D @ 1-D is mv, and a fold whose other operand
// is a vector (N-D @ 1-D, or 1-D @ N-D when the vector requires grad) is one mv.
namespace {
Tensor matrix_transpose(const Tensor& t) { return transpose(t, -2, -1); }  // Tensor.mT
Tensor matmul_impl(const Tensor& tensor1, const Tensor& tensor2);

// PyTorch's should_fold (without out=): whether the larger operand is folded into a matrix for mm.
bool should_fold(const Tensor& tensor1, const Tensor& tensor2) {
  const bool tensor1_larger = tensor1.dim() >= tensor2.dim();
  const Tensor t1 = tensor1_larger ? tensor1 : matrix_transpose(tensor2);
  const std::int64_t dim_t1 = t1.dim();
  const std::int64_t dim_t2 = tensor1_larger ? tensor2.dim() : tensor1.dim();
  if (!(dim_t1 >= 3 && dim_t2 <= 2)) return false;
  if (tensor1_larger ? tensor2.requires_grad() : tensor1.requires_grad()) return true;
  if (tensor1.dim() == 2) return false;
  if (t1.numel() == 0) return true;
  for (std::int64_t i = 0; i + 2 < dim_t1; ++i)
    if (t1.stride(i) != t1.stride(i + 1) * t1.size(i + 1)) return false;
  return true;
}

// The fold: t1 (>= 3-D) reshaped to [rows, k] for one mm with the matrix t2, or one mv with the vector t2.
Tensor folded_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  const bool transposed = tensor2.dim() > tensor1.dim();
  const Tensor t1 = transposed ? matrix_transpose(tensor2) : tensor1;
  const Tensor t2 = !transposed ? tensor2 : tensor1.dim() == 2 ? t(tensor1) : tensor1;
  DimVector output_shape(t1.sizes());
  const std::int64_t k = output_shape.back();
  output_shape.pop_back();
  std::int64_t rows = 1;  // a product, not -1: reshape cannot infer -1 next to a last dimension of 0
  for (std::int64_t s : output_shape) rows *= s;
  const bool t2_is_matrix = t2.dim() == 2;
  if (t2_is_matrix) output_shape.push_back(t2.size(1));
  const Tensor folded = reshape(t1, {rows, k});
  if (!t2_is_matrix) return _unsafe_view(mv(folded, t2), output_shape);
  const Tensor output = _unsafe_view(mm(folded, t2), output_shape);  // the product is nobody's view
  return transposed ? contiguous(matrix_transpose(output)) : output;
}

// Broadcast batches: both operands expanded to the broadcast batch shape, reshaped to 3-D, one bmm.
Tensor batched_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  const std::int64_t dim1 = tensor1.dim(), dim2 = tensor2.dim();
  // PyTorch's gradient optimisation: a batch of one that requires grad (or is a subclass) is squeezed
  // and takes the fold instead of being broadcast.
  if (dim1 == 3 && dim2 == 3 && tensor1.size(0) != tensor2.size(0)) {
    if (tensor1.size(0) == 1 && (tensor1.requires_grad() || is_tensor_subclass_like(tensor1)))
      return matmul_impl(squeeze(tensor1, 0), tensor2);
    if (tensor2.size(0) == 1 && (tensor2.requires_grad() || is_tensor_subclass_like(tensor2)))
      return matmul_impl(tensor1, squeeze(tensor2, 0));
  }
  const std::int64_t n = dim1 > 1 ? tensor1.size(-2) : 1, m1 = tensor1.size(-1);
  const std::int64_t m2 = dim2 > 1 ? tensor2.size(-2) : tensor2.size(0), p = dim2 > 1 ? tensor2.size(-1) : 1;
  const IntArrayRef batch1(tensor1.sizes().data(), static_cast<std::size_t>(std::max<std::int64_t>(dim1 - 2, 0)));
  const IntArrayRef batch2(tensor2.sizes().data(), static_cast<std::size_t>(std::max<std::int64_t>(dim2 - 2, 0)));
  DimVector output_shape = broadcast_shapes(batch1, batch2);
  std::int64_t batch = 1;
  for (std::int64_t s : output_shape) batch *= s;
  DimVector expand1 = output_shape, expand2 = output_shape;
  expand1.push_back(n);
  expand1.push_back(m1);
  expand2.push_back(m2);
  const bool vector_rhs = dim2 == 1;
  if (!vector_rhs) expand2.push_back(p);
  const Tensor expanded1 = reshape(expand(tensor1, expand1), {batch, n, m1});
  const Tensor expanded2 = vector_rhs ? unsqueeze(reshape(expand(tensor2, expand2), {batch, m2}), 2)
                                      : reshape(expand(tensor2, expand2), {batch, m2, p});
  if (dim1 > 1) output_shape.push_back(n);
  if (dim2 > 1) output_shape.push_back(p);
  const Tensor product = bmm(expanded1, expanded2);
  return _unsafe_view(vector_rhs ? squeeze(product, -1) : product, output_shape);
}

// PyTorch's _matmul_impl without out=.
Tensor matmul_impl(const Tensor& tensor1, const Tensor& tensor2) {
  const std::int64_t dim1 = tensor1.dim(), dim2 = tensor2.dim();
  STRATA_CHECK(dim1 != 0 && dim2 != 0, "both arguments to matmul need to be at least 1D, but they are ", dim1, "D and ",
               dim2, "D");
  if (dim1 == 1 && dim2 == 1) return dot(tensor1, tensor2);
  if (dim1 == 2 && dim2 == 1) return mv(tensor1, tensor2);
  if (dim1 == 1 && dim2 == 2) return squeeze(mm(unsqueeze(tensor1, 0), tensor2), 0);
  if (dim1 == 2 && dim2 == 2) return mm(tensor1, tensor2);
  if (should_fold(tensor1, tensor2)) return folded_matmul(tensor1, tensor2);
  return batched_matmul(tensor1, tensor2);
}
}  // namespace

Tensor matmul(const Tensor& input, const Tensor& other) {
  STRATA_TORCH_FUNCTION(functional::matmul, "torch.matmul", "input, other", input, other);
  detail::check_defined(input, "aten::matmul", 0, "self");
  detail::check_defined(other, "aten::matmul", 1, "other");
  return matmul_impl(input, other);
}

// PyTorch 2.8's at::linear: a contiguous 3-D input always takes the flattened addmm (the bias then
// broadcasts against the [rows, out] product, whatever its rank); other ranks only with a 1-D bias.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  STRATA_TORCH_FUNCTION(functional::linear, "torch.nn.functional.linear", "input, weight, bias", input, weight, bias);
  detail::check_defined(input, "aten::linear", 0, "input");
  detail::check_defined(weight, "aten::linear", 1, "weight");
  STRATA_CHECK(input.dim() != 0 && weight.dim() != 0, "both arguments to linear need to be at least 1D, but they are ",
               input.dim(), "D and ", weight.dim(), "D");
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, t(weight));
  if (bias.defined() && input.is_contiguous() && (input.dim() == 3 || bias.dim() == 1)) {
    const Tensor flat = reshape(input, {leading_rows(input), input.size(-1)});  // before t(weight), as PyTorch
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

Tensor relu(const Tensor& input) {
  STRATA_TORCH_FUNCTION(functional::relu, "torch.nn.functional.relu", "input, *, inplace=False", input);
  return strata::relu(input);
}

Tensor log_softmax(const Tensor& input, std::int64_t dim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(functional::log_softmax, "torch.nn.functional.log_softmax", "input, *, dim, _stacklevel=3, dtype",
                        input, dim, dtype);
  detail::check_defined(input, "aten::log_softmax", 0, "self");
  return _log_softmax(dtype ? to(input, *dtype) : input, dim, false);
}

Tensor gelu(const Tensor& input, std::string_view approximate) {
  STRATA_TORCH_FUNCTION(functional::gelu, "torch.nn.functional.gelu", "input, approximate", input, approximate);
  return strata::gelu(input, approximate);
}

Tensor sigmoid(const Tensor& input) {
  STRATA_TORCH_FUNCTION(functional::sigmoid, "torch.nn.functional.sigmoid", "input", input);
  return strata::sigmoid(input);
}

Tensor tanh(const Tensor& input) {
  STRATA_TORCH_FUNCTION(functional::tanh, "torch.nn.functional.tanh", "input", input);
  return strata::tanh(input);
}

Tensor softmax(const Tensor& input, std::int64_t dim, std::optional<ScalarType> dtype) {
  STRATA_TORCH_FUNCTION(functional::softmax, "torch.nn.functional.softmax", "input, dim, _stacklevel=3, dtype", input, dim,
                        dtype);
  return strata::softmax(input, dim, dtype);
}

Tensor dropout(const Tensor& input, double p, bool training) {
  STRATA_TORCH_FUNCTION(functional::dropout, "torch.nn.functional.dropout", "input, p, training, inplace=False", input, p,
                        training);
  STRATA_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  return strata::dropout(input, p, training);
}

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  STRATA_TORCH_FUNCTION(functional::pad, "torch.nn.functional.pad", "input, pad, [mode='constant'], [value]", input, options);
  return constant_pad_nd(input, options.pad(), options.value().value_or(0.0));
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  STRATA_TORCH_FUNCTION(functional::layer_norm, "torch.nn.functional.layer_norm",
                        "input, normalized_shape, *, weight, bias, eps", input, options);
  return strata::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(), options.eps());
}

std::optional<std::int64_t> embedding_padding_idx(std::optional<std::int64_t> padding_idx, std::int64_t num_embeddings) {
  if (!padding_idx) return std::nullopt;
  STRATA_CHECK(*padding_idx < num_embeddings && *padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings");
  return *padding_idx < 0 ? num_embeddings + *padding_idx : *padding_idx;
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx) {
  STRATA_TORCH_FUNCTION(functional::embedding, "torch.nn.functional.embedding", "input, weight, padding_idx", input, weight,
                        padding_idx);
  detail::check_defined(weight, "aten::embedding", 0, "weight");
  const std::int64_t rows = weight.dim() > 0 ? weight.size(0) : 0;
  return strata::embedding(weight, input, embedding_padding_idx(padding_idx, rows).value_or(-1));
}

// PyTorch's nll_loss_nd reads target.sizes()[0] unchecked; for a 0-d target that slot holds the 0
// a 0-d TensorImpl keeps there, so a 2-D input's check reports a target batch_size of 0.
Tensor nll_loss(const Tensor& input, const Tensor& target, const LossOptions& options) {
  STRATA_TORCH_FUNCTION(functional::nll_loss, "torch.nn.functional.nll_loss",
                        "input, target, *, weight, size_average=None, ignore_index, reduce=None, reduction", input,
                        target, options);
  detail::check_defined(input, "aten::nll_loss_nd", 0, "self");
  detail::check_defined(target, "aten::nll_loss_nd", 1, "target");
  STRATA_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  const std::int64_t target_batch = target.dim() > 0 ? target.size(0) : 0;
  STRATA_CHECK(input.dim() == 1 || input.size(0) == target_batch, "Expected input batch_size (", input.size(0),
               ") to match target batch_size (", target_batch, ").");
  STRATA_CHECK(input.dim() <= 2, "nll_loss: strata supports 1-D and 2-D input (got ", input.dim(), "-D)");
  return std::get<0>(nll_loss_forward(input, target, options.weight, static_cast<std::int64_t>(options.reduction),
                                      options.ignore_index));
}

// PyTorch takes a target shaped like the input for class probabilities (and wants it floating);
// any other target is class indices, whose dtype nll_loss checks.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const LossOptions& options) {
  STRATA_TORCH_FUNCTION(functional::cross_entropy, "torch.nn.functional.cross_entropy",
                        "input, target, *, weight, size_average=None, ignore_index, reduce=None, reduction, "
                        "label_smoothing=0.0",
                        input, target, options);
  detail::check_defined(input, "aten::cross_entropy_loss", 0, "self");
  detail::check_defined(target, "aten::cross_entropy_loss", 1, "target");
  if (input.sizes() == target.sizes()) {
    STRATA_CHECK(is_floating_point(target.dtype()), "Expected floating point type for target with class probabilities, got ",
                 target.dtype());
    STRATA_CHECK(false, "cross_entropy: strata supports class-index (int64) targets; a ", target.dtype(),
                 " target shaped like the input holds class probabilities, which are not supported");
  }
  const std::int64_t class_dim = input.dim() == 1 ? 0 : 1;
  return nll_loss(log_softmax(input, class_dim, input.dtype()), target, options);
}

}  // namespace strata::nn::functional
