// nn/init.cpp: fan computation, gains, and the uniform initialisers (torch/nn/init.py).
#include "nn/init.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "ops/functions.h"
#include "ops/torch_function.h"

namespace strata::nn::init {

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  STRATA_CHECK(t.defined(), "calculate_fan_in_and_fan_out: expected a defined tensor, got an undefined Tensor");
  STRATA_CHECK(t.dim() >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  std::int64_t receptive_field = 1;
  for (std::int64_t d = 2; d < t.dim(); ++d) receptive_field *= t.size(d);
  return {t.size(1) * receptive_field, t.size(0) * receptive_field};
}

double calculate_gain(std::string_view nonlinearity, double param) {
  constexpr std::array<std::string_view, 8> linear_fns = {"linear",           "conv1d",           "conv2d",
                                                          "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                                          "conv_transpose3d", "sigmoid"};
  if (std::find(linear_fns.begin(), linear_fns.end(), nonlinearity) != linear_fns.end()) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4;
  STRATA_CHECK(false, "Unsupported nonlinearity ", nonlinearity);
  return 0;
}

const Tensor& uniform_(const Tensor& t, double a, double b, const Generator* generator) {
  STRATA_TORCH_FUNCTION(init::uniform_, "torch.nn.init.uniform_", "*, tensor, a, b, generator", t, a, b, generator);
  autograd::NoGradGuard no_grad;
  return strata::uniform_(t, a, b, generator);
}

const Tensor& kaiming_uniform_(const Tensor& t, double a, std::string_view mode, std::string_view nonlinearity,
                               const Generator* generator) {
  STRATA_TORCH_FUNCTION(init::kaiming_uniform_, "torch.nn.init.kaiming_uniform_", "*, tensor, a, mode, nonlinearity, generator",
                        t, a, mode, nonlinearity, generator);
  STRATA_CHECK(t.defined(), "kaiming_uniform_: expected a defined tensor, got an undefined Tensor");
  if (t.numel() == 0) return t;  // PyTorch warns "Initializing zero-element tensors is a no-op"
  std::string lower(mode);  // torch.nn.init's _calculate_correct_fan lowercases the mode first
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  STRATA_CHECK(lower == "fan_in" || lower == "fan_out", "Mode ", lower,
               " not supported, please use one of ['fan_in', 'fan_out']");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double fan = static_cast<double>(lower == "fan_in" ? fan_in : fan_out);
  const double gain = calculate_gain(nonlinearity, a);
  const double bound = std::sqrt(3.0) * (gain / std::sqrt(fan));
  return init::uniform_(t, -bound, bound, generator);
}

}  // namespace strata::nn::init
