// ops/native/dropout_ops.cpp: native_dropout (output and a bool keep-mask, both with the input's
// layout; an empty input's mask has its dtype, as PyTorch's) and native_dropout_backward.
// In training each element is kept with probability 1 - p, drawn from the default generator in
// memory order under its lock, and kept elements are scaled by 1 / (1 - p) (0 when p = 1); with
// train=False the output is a copy and the mask all true. The draw is a uniform below 1 - p, not
// PyTorch's bernoulli_ (MKL's stream on x86), so masks are not PyTorch's for the same seed.
#include <mutex>
#include <optional>

#include "ops/boxing.h"
#include "ops/native/distributions.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"
#include "ops/native/operand.h"
#include "ops/native/output_layout.h"
#include "ops/native/type_promotion.h"

namespace strata::ops {

namespace {

bool trains(std::optional<bool> train) { return !train || *train; }

// ---- native_dropout ----
std::array<TensorSpec, 2> native_dropout_meta(const Tensor& input, double p, std::optional<bool> train) {
  // Both outputs follow the input's layout (empty_like, and input.mul(mask) or clone).
  const DimVector strides = output_strides(input.sizes(), {&input});
  // PyTorch's CPU kernel returns an empty input at once, with empty_like(input) as the mask: the
  // input's dtype, not bool, and nothing checked.
  if (input.numel() == 0) return {TensorSpec{{}, input.dtype(), strides, &input}, TensorSpec{{}, input.dtype(), strides, &input}};
  if (trains(train)) {
    STRATA_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", 1 - p);
    STRATA_CHECK(is_floating_point(input.dtype()), "result type float32 can't be cast to the desired output type ",
                 input.dtype());
  }
  return {TensorSpec{{}, input.dtype(), strides, &input}, TensorSpec{{}, ScalarType::Bool, strides, &input}};
}

void native_dropout_cpu(const Tensor& output, const Tensor& mask, const Tensor& input, double p, std::optional<bool> train) {
  if (output.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  bool* m = data_of<bool>(mask);
  if (!trains(train)) {
    std::fill(m, m + mask.numel(), true);
    copy_elements(output, input);
    return;
  }
  const double keep = 1 - p;
  // The outputs have the input's layout. A dense input is read in memory order, as they are written;
  // any other is read as a contiguous copy, into contiguous outputs that are then copied back when
  // their layout is permuted (Note [Operands are read where they are]).
  const bool same_layout = input.is_non_overlapping_and_dense() && input.strides() == output.strides();
  const bool via_copy = !same_layout && !output.is_contiguous();
  const Tensor out = via_copy ? strata::detail::make_contiguous_tensor(output.sizes(), output.dtype(), Device::CPU) : output;
  const Tensor out_mask = via_copy ? strata::detail::make_contiguous_tensor(mask.sizes(), ScalarType::Bool, Device::CPU) : mask;
  const Operand x_t = same_layout ? Operand::contiguous(Tensor()) : Operand::contiguous(input);
  visit_floating(input.dtype(), "native_dropout", [&](auto zero) {
    using T = decltype(zero);
    const T scale = static_cast<T>(keep == 0 ? 0.0 : 1.0 / keep);
    const T* x = same_layout ? data_of<T>(input) : data_of<T>(*x_t);
    T* o = data_of<T>(out);
    bool* kept = data_of<bool>(out_mask);
    {
      GeneratorImpl& g = *default_generator().impl();
      std::lock_guard<std::mutex> lock(g.mutex());
      for (std::int64_t i = 0; i < out_mask.numel(); ++i) kept[i] = uniform_real<double>(g, 0.0, 1.0) < keep;
    }
    for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = (x[i] * T(kept[i])) * scale;  // input.mul(mask).mul_(scale)
  });
  if (via_copy) {
    copy_elements(output, out);
    copy_elements(mask, out_mask);
  }
}

// ---- native_dropout_backward: grad_output * mask * scale ----
TensorSpec native_dropout_backward_meta(const Tensor& grad_output, const Tensor& mask, double scale) {
  (void)scale;
  const ScalarType common = result_type(grad_output, mask);
  const ScalarType dtype = is_floating_point(common) ? common : ScalarType::Float32;  // times a float scale
  return {broadcast_shapes(grad_output.sizes(), mask.sizes()), dtype, {}};
}

void native_dropout_backward_cpu(const Tensor& out, const Tensor& grad_output, const Tensor& mask, double scale) {
  visit_floating(out.dtype(), "native_dropout_backward", [&](auto zero) {
    using T = decltype(zero);
    const T s = static_cast<T>(scale);
    promoting_binary_loop<T>(out, grad_output, mask, [s](T g, T m) { return g * m * s; });
  });
}

}  // namespace

// register_dropout_ops(): the rows of dropout_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/dropout_ops_rows.inc"

}  // namespace strata::ops
