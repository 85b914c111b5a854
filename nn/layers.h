// nn/layers.h: the modules an MLP is made of: Linear (with PyTorch's initialisation, in PyTorch's
// order: weight then bias), ReLU, and Sequential; and Embedding, Dropout and LayerNorm for small language models.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "module.h"

namespace strata::nn {

// in_features and out_features are the weight's sizes, which repr() reads.
class Linear final : public Module {
 public:
  // weight [out, in] ~ kaiming_uniform_(a=sqrt(5)); bias [out] ~ U(-1/sqrt(in), 1/sqrt(in)).
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }

 protected:
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;
  void parameters_replaced() override;

 private:
  Tensor weight_, bias_;
};

class ReLU final : public Module {
 public:
  Tensor forward(const Tensor& input) override;

 protected:
  std::string type_name() const override { return "ReLU"; }
};

// A lookup table: weight [num_embeddings, embedding_dim] ~ N(0, 1), with the padding_idx row zero
// (a negative padding_idx counts from the end, as PyTorch's); forward(indices) = F::embedding.
// num_embeddings and embedding_dim are the weight's sizes, which repr() reads.
class Embedding final : public Module {
 public:
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, std::optional<std::int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& indices) override;
  const Tensor& weight() const { return weight_; }

 protected:
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;
  void parameters_replaced() override { weight_ = parameter("weight"); }

 private:
  std::optional<std::int64_t> padding_idx_;
  Tensor weight_;
};

// Zeroes elements with probability p and scales the rest by 1 / (1 - p) while training; the input
// itself in eval().
class Dropout final : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;

 protected:
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override;

 private:
  double p_;
};

// Layer normalisation over the trailing dimensions normalized_shape (F::layer_norm); with
// elementwise_affine, a weight of ones and a bias of zeros of that shape, as PyTorch's.
class LayerNorm final : public Module {
 public:
  explicit LayerNorm(std::vector<std::int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }

 protected:
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;
  void parameters_replaced() override;

 private:
  std::vector<std::int64_t> normalized_shape_;
  double eps_;
  Tensor weight_, bias_;
};

class Sequential final : public Module {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  std::size_t size() const { return named_children().size(); }

 protected:
  std::string type_name() const override { return "Sequential"; }
};

// Linear(sizes[0], sizes[1]) -> ReLU -> ... -> Linear(sizes[n-2], sizes[n-1]): the dispatch-tracer experiment's model.
std::shared_ptr<Sequential> make_mlp(const std::vector<std::int64_t>& sizes);

}  // namespace strata::nn
