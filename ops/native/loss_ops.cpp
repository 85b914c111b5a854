// ops/native/loss_ops.cpp: nll_loss_forward and nll_loss_backward (reduction none=0 / mean=1 / sum=2,
// ignore_index, optional per-class weight), for input [N, C] with target [N], or input [C] with a
// 0-d target. Forward returns (output, total_weight) as PyTorch does; backward needs total_weight.
#include <cmath>

#include "ops/boxing.h"
#include "ops/native/operand.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

constexpr std::int64_t kReductionNone = 0, kReductionMean = 1;

// PyTorch's nll_loss_forward and nll_loss_backward meta functions, in their order. Any reduction but
// none (0) and mean (1) sums, as PyTorch's kernels do (its Python front end names the three).
void check_nll_shapes(const Tensor& self, const Tensor& target) {
  STRATA_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  STRATA_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  // PyTorch reads target.size(0) before it words the mismatch: a 0-d target raises size()'s error.
  STRATA_CHECK(no_batch_dim || target.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  STRATA_CHECK(no_batch_dim || self.sizes()[0] == target.sizes()[0], "size mismatch (got input: ",
               shape_str(self.sizes()), ", target: ", shape_str(target.sizes()), ")");
}

// The kernels' dtype errors: AT_DISPATCH's for self, data_ptr's "expected scalar type Long but found
// Float" for the others (in strata's dtype names).
void check_nll_dtypes(const Tensor& self, const Tensor& target, const Tensor& weight, const char* kernel) {
  check_floating(self.dtype(), kernel);
  STRATA_CHECK(!weight.defined() || weight.dtype() == self.dtype(), "expected scalar type ", self.dtype(), " but found ",
               weight.dtype());
  STRATA_CHECK(target.dtype() == ScalarType::Int64, "expected scalar type int64 but found ", target.dtype());
}

// The rows of a [N, C] or [C] input, with the target class of each.
struct NllRows {
  std::int64_t batch;
  std::int64_t classes;
  const std::int64_t* target;
};

NllRows nll_rows(const Tensor& self, const Tensor& target) {
  return {self.dim() == 1 ? 1 : self.sizes()[0], self.sizes().back(), data_of<std::int64_t>(target)};
}

// Calls fn(weight_of), where weight_of(c) is w[c], or a constant 1 when there is no weight: the
// unweighted loops (cross_entropy's) then fold the multiplications by 1 away. x * 1 is x, so the
// results are the same either way.
template <typename T, typename Fn>
void with_class_weight(const T* w, const Fn& fn) {
  if (w) return fn([w](std::int64_t c) { return w[c]; });
  fn([](std::int64_t) { return T(1); });
}

std::int64_t checked_target(std::int64_t t, std::int64_t classes) {
  STRATA_CHECK(t >= 0 && t < classes, "Target ", t, " is out of bounds.");
  return t;
}

// ---- nll_loss_forward ----
std::array<TensorSpec, 2> nll_loss_forward_meta(const Tensor& self, const Tensor& target, const Tensor& weight,
                                                std::int64_t reduction, std::int64_t ignore_index) {
  (void)ignore_index;
  check_nll_shapes(self, target);
  const std::int64_t n_classes = self.sizes().back();
  STRATA_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == n_classes),
               "weight tensor should be defined either for all ", n_classes,
               " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
  check_nll_dtypes(self, target, weight, "\"nll_loss_out_frame\"");
  DimVector out_sizes;
  if (reduction == kReductionNone && self.dim() == 2) out_sizes.push_back(self.sizes()[0]);
  return {TensorSpec{out_sizes, self.dtype(), {}}, TensorSpec{{}, self.dtype(), {}}};
}

void nll_loss_forward_cpu(const Tensor& output, const Tensor& total_weight, const Tensor& self, const Tensor& target,
                          const Tensor& weight, std::int64_t reduction, std::int64_t ignore_index) {
  // Note [Operands are read where they are]
  const Operand x_t = Operand::contiguous(self), t_t = Operand::contiguous(target), w_t = Operand::contiguous(weight);
  const NllRows rows = nll_rows(*x_t, *t_t);
  visit_floating(self.dtype(), "nll_loss_forward", [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(*x_t);
    const T* w = w_t->defined() ? data_of<T>(*w_t) : nullptr;
    T* out = data_of<T>(output);
    if (reduction == kReductionNone && self.dim() == 2) {
      for (std::int64_t i = 0; i < rows.batch; ++i) {
        const std::int64_t target_class = rows.target[i];
        if (target_class == ignore_index) {
          out[i] = 0;
          continue;
        }
        const std::int64_t c = checked_target(target_class, rows.classes);
        out[i] = -x[i * rows.classes + c] * (w ? w[c] : T(1));
      }
      *data_of<T>(total_weight) = 0;
      return;
    }
    double loss = 0, weight_sum = 0;
    with_class_weight(w, [&](auto weight_of) {
      for (std::int64_t i = 0; i < rows.batch; ++i) {
        const std::int64_t target_class = rows.target[i];
        if (target_class == ignore_index) continue;
        const std::int64_t c = checked_target(target_class, rows.classes);
        const double wc = static_cast<double>(weight_of(c));
        weight_sum += wc;
        loss -= static_cast<double>(x[i * rows.classes + c]) * wc;
      }
    });
    if (reduction == kReductionMean) loss /= weight_sum;  // 0/0 gives nan when every target is ignored
    *out = static_cast<T>(loss);
    *data_of<T>(total_weight) = static_cast<T>(weight_sum);
  });
}

// ---- nll_loss_backward ----
TensorSpec nll_loss_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                  const Tensor& weight, std::int64_t reduction, std::int64_t ignore_index,
                                  const Tensor& total_weight) {
  (void)ignore_index;
  check_nll_shapes(self, target);
  STRATA_CHECK(total_weight.numel() == 1, "expected total_weight to be a  single element tensor, got: ",  // PyTorch's two spaces
               shape_str(total_weight.sizes()), " (", total_weight.numel(), " elements)");
  STRATA_CHECK(!weight.defined() || weight.numel() == self.sizes().back(),
               "weight tensor should be defined either for all or no classes");
  if (reduction == kReductionNone && self.dim() == 2) {
    // check_dim_size's words; it reads grad_output.size(0) for them, which a 0-d tensor does not have
    STRATA_CHECK(grad_output.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
    STRATA_CHECK(grad_output.dim() == 1 && grad_output.sizes()[0] == self.sizes()[0],
                 "Expected a tensor of dimension 1 and tensor.size[0] == ", self.sizes()[0], " but got: dimension ",
                 grad_output.dim(), " and tensor.size[0] = ", grad_output.sizes()[0]);
  } else {
    STRATA_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1,
                 "Expected a single element grad_output tensor, but got: ", shape_str(grad_output.sizes()));
  }
  check_floating(self.dtype(), "\"nll_loss_backward_out_frame\"");
  STRATA_CHECK(target.dtype() == ScalarType::Int64, "expected scalar type int64 but found ", target.dtype());
  STRATA_CHECK(!weight.defined() || weight.dtype() == self.dtype(), "expected scalar type ", self.dtype(), " but found ",
               weight.dtype());
  STRATA_CHECK(grad_output.dtype() == self.dtype(), "expected scalar type ", self.dtype(), " but found ",
               grad_output.dtype());
  return {{}, self.dtype(), {}, &self};
}

void nll_loss_backward_cpu(const Tensor& grad_input, const Tensor& grad_output, const Tensor& self,
                           const Tensor& target, const Tensor& weight, std::int64_t reduction,
                           std::int64_t ignore_index, const Tensor& total_weight) {
  // Note [Operands are read where they are]
  const Operand t_t = Operand::contiguous(target), w_t = Operand::contiguous(weight),
                g_t = Operand::contiguous(grad_output);
  const NllRows rows = nll_rows(self, *t_t);
  visit_floating(self.dtype(), "nll_loss_backward", [&](auto zero) {
    using T = decltype(zero);
    T* gi = data_of<T>(grad_input);
    std::fill(gi, gi + grad_input.numel(), T(0));
    const T* w = w_t->defined() ? data_of<T>(*w_t) : nullptr;
    const T* g = data_of<T>(*g_t);
    const bool per_row = reduction == kReductionNone && self.dim() == 2;
    const T total = total_weight.item<T>();
    const T scale = -(reduction == kReductionMean ? g[0] / total : g[0]);
    with_class_weight(w, [&](auto weight_of) {
      for (std::int64_t i = 0; i < rows.batch; ++i) {
        const std::int64_t target_class = rows.target[i];
        if (target_class == ignore_index) continue;
        const std::int64_t c = checked_target(target_class, rows.classes);
        gi[i * rows.classes + c] = per_row ? -weight_of(c) * g[i] : weight_of(c) * scale;
      }
    });
  });
}

}  // namespace

// register_loss_ops(): the rows of loss_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/loss_ops_rows.inc"

}  // namespace strata::ops
