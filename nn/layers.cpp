// nn/layers.cpp: Linear, ReLU, Embedding, Dropout, Sequential.
#include "nn/layers.h"

#include <charconv>
#include <cmath>

#include "nn/functional.h"
#include "nn/init.h"
#include "autograd/grad_mode.h"
#include "ops/functions.h"

namespace strata::nn {

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool bias) {
  weight_ = register_parameter("weight", empty({out_features, in_features}));
  if (bias) bias_ = register_parameter("bias", empty({out_features}));
  init::kaiming_uniform_(weight_, std::sqrt(5.0));
  if (bias) {
    const auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight_);
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias_, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight_, bias_); }

void Linear::parameters_replaced() {
  weight_ = parameter("weight");
  if (bias_.defined()) bias_ = parameter("bias");
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(weight_.size(1)) + ", out_features=" + std::to_string(weight_.size(0)) +
         ", bias=" + (bias_.defined() ? "True" : "False");
}

Tensor ReLU::forward(const Tensor& input) { return functional::relu(input); }

Embedding::Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, std::optional<std::int64_t> padding_idx)
    : padding_idx_(functional::embedding_padding_idx(padding_idx, num_embeddings)) {
  weight_ = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  autograd::NoGradGuard no_grad;
  normal_(weight_);
  if (padding_idx_) fill_(as_strided(weight_, {embedding_dim}, {1}, *padding_idx_ * embedding_dim), 0);
}

Tensor Embedding::forward(const Tensor& indices) { return functional::embedding(indices, weight_, padding_idx_); }

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(weight_.size(0)) + ", " + std::to_string(weight_.size(1));
  if (padding_idx_) s += ", padding_idx=" + std::to_string(*padding_idx_);
  return s;
}

Dropout::Dropout(double p) : p_(p) {
  STRATA_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

Tensor Dropout::forward(const Tensor& input) { return functional::dropout(input, p_, is_training()); }

namespace {
// A double as Python's repr writes it: the shortest form that reads back, with ".0" on integers.
std::string python_float(double v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  std::string s(buf, end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

std::string Dropout::extra_repr() const { return "p=" + python_float(p_) + ", inplace=False"; }

LayerNorm::LayerNorm(std::vector<std::int64_t> normalized_shape, double eps, bool elementwise_affine)
    : normalized_shape_(std::move(normalized_shape)), eps_(eps) {
  if (!elementwise_affine) return;
  weight_ = register_parameter("weight", ones(normalized_shape_));
  bias_ = register_parameter("bias", zeros(normalized_shape_));
}

Tensor LayerNorm::forward(const Tensor& input) {
  return functional::layer_norm(input, functional::LayerNormFuncOptions(normalized_shape_).weight(weight_).bias(bias_).eps(eps_));
}

void LayerNorm::parameters_replaced() {
  if (!weight_.defined()) return;
  weight_ = parameter("weight");
  bias_ = parameter("bias");
}

// PyTorch's "(3,), eps=1e-05, elementwise_affine=True": the shape as a Python tuple, eps as Python
// writes a float.
std::string LayerNorm::extra_repr() const {
  std::string shape = "(";
  for (std::size_t i = 0; i < normalized_shape_.size(); ++i) shape += (i ? ", " : "") + std::to_string(normalized_shape_[i]);
  shape += normalized_shape_.size() == 1 ? ",)" : ")";
  return shape + ", eps=" + python_float(eps_) + ", elementwise_affine=" + (weight_.defined() ? "True" : "False");
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) {
  for (auto& m : modules) push_back(std::move(m));
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [name, child] : named_children()) x = (*child)(x);  // through __call__: hooks see children
  return x;
}

std::shared_ptr<Sequential> make_mlp(const std::vector<std::int64_t>& sizes) {
  STRATA_CHECK(sizes.size() >= 2, "an MLP needs at least an input and an output size, got ", sizes.size(), " sizes");
  auto model = std::make_shared<Sequential>();
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    model->push_back(std::make_shared<Linear>(sizes[i], sizes[i + 1]));
    if (i + 2 < sizes.size()) model->push_back(std::make_shared<ReLU>());
  }
  return model;
}

}  // namespace strata::nn
