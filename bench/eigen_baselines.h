// bench/eigen_baselines.h: the same work as strata's ops, written by hand in Eigen, measured in the
// same run as strata so ratios are meaningful on a noisy machine. An MLP training step here is what
// a careful engineer would write directly: row-major matrices, fused bias adds, buffers kept from
// step to step (a step allocates nothing), no framework.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace strata::bench {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

class EigenMlp {
 public:
  // Same shapes as nn::make_mlp(sizes); weights [out, in] as nn.Linear stores them.
  EigenMlp(const std::vector<std::int64_t>& sizes, unsigned seed);
  // Forward only (logits).
  const RowMatrix& forward(const RowMatrix& x);
  // zero_grad, forward, cross-entropy (mean), backward, SGD step; returns the loss.
  float train_step(const RowMatrix& x, const std::vector<std::int64_t>& y, float lr);

 private:
  std::vector<RowMatrix> weights_;
  std::vector<RowVector> biases_;
  std::vector<RowMatrix> activations_;  // inputs of each layer, then the logits
  std::vector<RowMatrix> grad_out_;     // gradient of the loss with respect to each activation
  std::vector<RowMatrix> grad_w_;
  std::vector<RowVector> grad_b_;
};

}  // namespace strata::bench
