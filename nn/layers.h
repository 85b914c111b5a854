// nn/layers.h: the modules an MLP is made of: Linear (with PyTorch's initialisation, in PyTorch's
// order: weight then bias), ReLU, and Sequential.
#pragma once

#include <memory>
#include <vector>

#include "module.h"

namespace strata::nn {

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

 private:
  std::int64_t in_features_, out_features_;
  Tensor weight_, bias_;
};

class ReLU final : public Module {
 public:
  Tensor forward(const Tensor& input) override;

 protected:
  std::string type_name() const override { return "ReLU"; }
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

// Linear(sizes[0], sizes[1]) -> ReLU -> ... -> Linear(sizes[n-2], sizes[n-1]): the seed's model.
std::shared_ptr<Sequential> make_mlp(const std::vector<std::int64_t>& sizes);

}  // namespace strata::nn
