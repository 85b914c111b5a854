// nn/init.h: torch.nn.init for what nn.Linear uses. Draws go through the dispatched uniform_ op
// under no_grad, in PyTorch's order, so the same seed gives the same parameters as PyTorch.
#pragma once

#include <string_view>
#include <utility>

#include "../core/generator.h"
#include "../core/tensor.h"

namespace strata::nn::init {

// (fan_in, fan_out) of a weight of at least 2 dimensions.
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
// The recommended gain for a nonlinearity ("linear", "relu", "leaky_relu" with slope `param`, "selu", ...).
double calculate_gain(std::string_view nonlinearity, double param = 0.01);

const Tensor& uniform_(const Tensor& t, double a = 0.0, double b = 1.0, const Generator* generator = nullptr);
// U(-bound, bound) with bound = gain * sqrt(3 / fan); mode "fan_in" or "fan_out" (any case).
const Tensor& kaiming_uniform_(const Tensor& t, double a = 0.0, std::string_view mode = "fan_in",
                               std::string_view nonlinearity = "leaky_relu", const Generator* generator = nullptr);

}  // namespace strata::nn::init
