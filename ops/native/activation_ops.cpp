// ops/native/activation_ops.cpp: the elementwise activations an inference app needs and their backwards:
// sigmoid / sigmoid_backward, silu / silu_backward, tanh / tanh_backward, gelu / gelu_backward
// (approximate 'none' or 'tanh'), each with PyTorch's CPU formula. sigmoid and tanh are unary float ops (integer and bool
// inputs compute in float32, as exp); gelu and the backwards want floating inputs.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

TensorSpec unary_float_spec(const Tensor& self, ScalarType dtype) {
  return {{}, dtype, output_strides(self.sizes(), {&self}), &self};
}

// The output of a binary backward (grad_output and one saved tensor): broadcast shape, promoted dtype,
// which must be floating (`kernel` is PyTorch's kernel name in its "not implemented" error).
TensorSpec binary_backward_spec(const Tensor& grad_output, const Tensor& other, std::string_view kernel) {
  const ScalarType dtype = result_type(grad_output, other);
  check_floating(dtype, kernel);
  if (grad_output.sizes() == other.sizes()) return {{}, dtype, output_strides(grad_output.sizes(), {&grad_output, &other}), &grad_output};
  DimVector shape = broadcast_shapes(grad_output.sizes(), other.sizes());
  DimVector strides = output_strides(shape, {&grad_output, &other});
  return {std::move(shape), dtype, std::move(strides)};
}

// out = fn(x) with x read in out's dtype (a copy only for another dtype: Note [Operands are read where they are]).
template <typename Fn>
void unary_float_cpu(const Tensor& out, const Tensor& self, std::string_view name, const Fn& fn) {
  visit_floating(out.dtype(), name, [&](auto zero) {
    using T = decltype(zero);
    unary_loop<T>(out, Operand::in_dtype(self, out.dtype()), [fn](T x) { return fn(x); });
  });
}

template <typename Fn>
void binary_float_cpu(const Tensor& out, const Tensor& a, const Tensor& b, std::string_view name, const Fn& fn) {
  visit_floating(out.dtype(), name, [&](auto zero) {
    using T = decltype(zero);
    promoting_binary_loop<T>(out, a, b, [fn](T x, T y) { return fn(x, y); });
  });
}

// ---- sigmoid: 1 / (1 + exp(-x)) ----
TensorSpec sigmoid_meta(const Tensor& self) { return unary_float_spec(self, to_float_dtype(self.dtype())); }
void sigmoid_cpu(const Tensor& out, const Tensor& self) {
  unary_float_cpu(out, self, "\"sigmoid_cpu\"", [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); });
}

// ---- sigmoid_backward: grad_output * (1 - output) * output ----
TensorSpec sigmoid_backward_meta(const Tensor& grad_output, const Tensor& output) {
  return binary_backward_spec(grad_output, output, "\"sigmoid_backward_cpu\"");
}
void sigmoid_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& output) {
  binary_float_cpu(out, grad_output, output, "\"sigmoid_backward_cpu\"",
                   [](auto g, auto y) { return g * (decltype(y)(1) - y) * y; });
}

// ---- silu: x * sigmoid(x) = x / (1 + exp(-x)), floating inputs only ----
TensorSpec silu_meta(const Tensor& self) {
  check_floating(self.dtype(), "\"silu_cpu\"");
  return unary_float_spec(self, self.dtype());
}
void silu_cpu(const Tensor& out, const Tensor& self) {
  unary_float_cpu(out, self, "\"silu_cpu\"", [](auto x) { return x / (decltype(x)(1) + std::exp(-x)); });
}

// ---- silu_backward: grad_output * s * (1 + self * (1 - s)), s = sigmoid(self) ----
TensorSpec silu_backward_meta(const Tensor& grad_output, const Tensor& self) {
  return binary_backward_spec(grad_output, self, "\"silu_backward_cpu\"");
}
void silu_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& self) {
  binary_float_cpu(out, grad_output, self, "\"silu_backward_cpu\"", [](auto g, auto x) {
    using T = decltype(x);
    const T s = T(1) / (T(1) + std::exp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  });
}

// ---- tanh ----
TensorSpec tanh_meta(const Tensor& self) { return unary_float_spec(self, to_float_dtype(self.dtype())); }
void tanh_cpu(const Tensor& out, const Tensor& self) {
  unary_float_cpu(out, self, "\"tanh_cpu\"", [](auto x) { return std::tanh(x); });
}

// ---- tanh_backward: grad_output * (1 - output^2) ----
TensorSpec tanh_backward_meta(const Tensor& grad_output, const Tensor& output) {
  return binary_backward_spec(grad_output, output, "\"tanh_backward_cpu\"");
}
void tanh_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& output) {
  binary_float_cpu(out, grad_output, output, "\"tanh_backward_cpu\"",
                   [](auto g, auto y) { return g * (decltype(y)(1) - y * y); });
}

// ---- gelu: x * Phi(x) ('none'), or 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) ('tanh') ----
enum class GeluType { None, Tanh };
GeluType gelu_type(std::string_view approximate) {
  if (approximate == "none") return GeluType::None;
  STRATA_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return GeluType::Tanh;
}
constexpr double kGeluBeta = M_SQRT2 * M_2_SQRTPI * 0.5;  // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;
constexpr double kGeluAlpha = M_2_SQRTPI * M_SQRT1_2 * 0.5;  // 1 / sqrt(2 pi)

TensorSpec gelu_meta(const Tensor& self, std::string_view approximate) {
  gelu_type(approximate);
  check_floating(self.dtype(), "\"GeluKernelImpl\"");
  return unary_float_spec(self, self.dtype());
}
void gelu_cpu(const Tensor& out, const Tensor& self, std::string_view approximate) {
  if (gelu_type(approximate) == GeluType::None) {
    unary_float_cpu(out, self, "\"GeluKernelImpl\"", [](auto x) {
      using T = decltype(x);
      return x * T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
    });
    return;
  }
  unary_float_cpu(out, self, "\"GeluKernelImpl\"", [](auto x) {
    using T = decltype(x);
    const T inner = T(kGeluBeta) * (x + T(kGeluKappa) * x * x * x);
    return T(0.5) * x * (T(1) + std::tanh(inner));
  });
}

// ---- gelu_backward: grad_output * d gelu(self) / d self ----
TensorSpec gelu_backward_meta(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  gelu_type(approximate);
  return binary_backward_spec(grad_output, self, "\"GeluBackwardKernelImpl\"");
}
void gelu_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  if (gelu_type(approximate) == GeluType::None) {
    binary_float_cpu(out, grad_output, self, "\"GeluBackwardKernelImpl\"", [](auto g, auto x) {
      using T = decltype(x);
      const T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
      const T pdf = std::exp(T(-0.5) * x * x) * T(kGeluAlpha);
      return g * (cdf + x * pdf);
    });
    return;
  }
  binary_float_cpu(out, grad_output, self, "\"GeluBackwardKernelImpl\"", [](auto g, auto x) {
    using T = decltype(x);
    const T x_sq = x * x;
    const T inner = T(kGeluBeta) * (x + T(kGeluKappa) * x_sq * x);
    const T tanh_inner = std::tanh(inner);
    const T left = T(0.5) * x;
    const T right = T(1) + tanh_inner;
    const T left_derivative = T(0.5) * right;
    const T right_derivative = left * (T(1) - tanh_inner * tanh_inner) * T(kGeluBeta) * (T(1) + T(3 * kGeluKappa) * x_sq);
    return g * (left_derivative + right_derivative);
  });
}

}  // namespace

// register_activation_ops(): the rows of activation_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/activation_ops_rows.inc"

}  // namespace strata::ops
