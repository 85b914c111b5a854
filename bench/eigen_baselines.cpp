// bench/eigen_baselines.cpp: the hand-written Eigen MLP.
#include "bench/eigen_baselines.h"

#include <cmath>
#include <random>

namespace strata::bench {

EigenMlp::EigenMlp(const std::vector<std::int64_t>& sizes, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    weights_.push_back(RowMatrix::NullaryExpr(sizes[i + 1], sizes[i], [&] { return u(gen); }));
    biases_.push_back(RowVector::NullaryExpr(sizes[i + 1], [&] { return u(gen); }));
  }
  activations_.resize(sizes.size());
  grad_out_.resize(sizes.size());
  grad_w_ = weights_;  // gradient buffers of the parameters' shapes
  grad_b_ = biases_;
}

const RowMatrix& EigenMlp::forward(const RowMatrix& x) {
  activations_[0] = x;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    RowMatrix& out = activations_[l + 1];
    out.noalias() = activations_[l] * weights_[l].transpose();
    out.rowwise() += biases_[l];
    if (l + 1 < weights_.size()) out = out.cwiseMax(0.0f);
  }
  return activations_.back();
}

float EigenMlp::train_step(const RowMatrix& x, const std::vector<std::int64_t>& y, float lr) {
  const RowMatrix& logits = forward(x);
  const Eigen::Index n = logits.rows();
  // log_softmax, the mean negative log-likelihood and its gradient, row by row. Every buffer is a
  // member sized on the first step, so a step allocates nothing (resize to the same shape is free).
  RowMatrix& grad = grad_out_.back();
  grad.resize(logits.rows(), logits.cols());
  float loss = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const float m = logits.row(i).maxCoeff();
    const float log_sum = std::log((logits.row(i).array() - m).exp().sum());
    const auto label = static_cast<Eigen::Index>(y[static_cast<std::size_t>(i)]);
    loss -= logits(i, label) - m - log_sum;
    grad.row(i) = (logits.row(i).array() - m - log_sum).exp() / static_cast<float>(n);
    grad(i, label) -= 1.0f / static_cast<float>(n);
  }
  // Backward through the layers, updating each as soon as its gradient is known.
  for (std::size_t l = weights_.size(); l-- > 0;) {
    const RowMatrix& g = grad_out_[l + 1];
    grad_w_[l].noalias() = g.transpose() * activations_[l];
    grad_b_[l].noalias() = g.colwise().sum();
    if (l > 0) {
      RowMatrix& grad_in = grad_out_[l];
      grad_in.resize(g.rows(), weights_[l].cols());
      grad_in.noalias() = g * weights_[l];
      grad_in = (activations_[l].array() > 0).select(grad_in, 0.0f);
    }
    weights_[l] -= lr * grad_w_[l];
    biases_[l] -= lr * grad_b_[l];
  }
  return loss / static_cast<float>(n);
}

}  // namespace strata::bench
