// examples/spiral_classifier.h: what train_classifier and classify share: the model (an MLP from 2-D
// points to 3 class scores) and the class it predicts. Uses only the installed <strata/strata.h>.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <strata/strata.h>

namespace spiral {

inline constexpr int kClasses = 3;

// Linear(2,64) -> ReLU -> Linear(64,64) -> ReLU -> Linear(64,3): state_dict keys 0.weight, 0.bias,
// 2.weight, 2.bias, 4.weight, 4.bias, as torch.nn.Sequential names them.
inline std::shared_ptr<strata::nn::Sequential> make_classifier() {
  return strata::nn::make_mlp({2, 64, 64, kClasses});
}

// The class with the highest score in each row of `logits` ([n, kClasses]).
inline std::vector<std::int64_t> predicted_classes(const strata::Tensor& logits) {
  return logits.argmax(1).to_vector<std::int64_t>();
}

}  // namespace spiral
