// autograd/formulas/layer_norm_double_backward.cpp: the derivative of native_layer_norm_backward,
// PyTorch's layer_norm_double_backward (torch/csrc/autograd/FunctionsManual.cpp), in the ops it
// dispatches and in their order, so a mode sees PyTorch's double backward of layer_norm.
//
// The rows are viewed as an [M, N] matrix (N the normalized elements); mean and rstd as [M, 1].
// ggI, ggG and ggB are the gradients arriving for the first backward's grad_input, grad_weight and
// grad_bias; the results are the gradients of its input, weight and grad_out. Every product whose two
// operands each dispatch an op names the right operand first: PyTorch's gcc-built C++ runs it first
// (Note [An op's operands are dispatched in a written order]).
//
// Note [layer_norm's double backward without a weight]
// grad_bias = sum(grad_out) over the rows, so the gradient arriving for grad_bias (ggB) reaches
// grad_out whether or not there is a weight. PyTorch reshapes ggB only when there is a weight, and so
// drops that term for layer_norm(x, shape, None, bias): its own gradgradcheck of that call fails (1.13
// and 2.8 write the same lines). strata keeps the term: the same ops and order as PyTorch's with a
// weight, one view more without.
#include <array>
#include <tuple>

#include "autograd/formulas/functions_manual.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// The rows' quantities both the input's and grad_out's gradients reuse.
struct Centred {
  std::int64_t n;           // N, the normalized elements of one row
  Tensor input_sub_mu;      // x - mean
  Tensor invstd;            // rstd = (var + eps)^-1/2
  Tensor invstd_squared;    // rstd^2
};

// The first backward's grad_input for an incoming gradient `go` and weight `gamma` (PyTorch's
// first_bwd_fn_grad_input): gamma * rstd / N * (N * go - sum(go) - (x - mean) * rstd^2 * sum(go * (x - mean))).
Tensor first_backward_grad_input(const Centred& c, const Tensor& go, const Tensor& gamma) {
  Tensor h0 = mul(gamma, c.invstd);
  div_(h0, c.n);
  Tensor h1 = mul(go, Scalar(c.n));  // C++'s N * go: mul.Scalar
  sub_(h1, sum(go, {1}, true));
  const Tensor projection_sum = sum(mul(go, c.input_sub_mu), {1}, true);
  const Tensor scaled = mul(c.input_sub_mu, c.invstd_squared);
  sub_(h1, mul(scaled, projection_sum));
  return mul(h0, h1);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& input_t, const Tensor& gamma,
                                                              const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
                                                              const Tensor& gO_t, const Tensor& save_mean_t,
                                                              const Tensor& save_invstd_t, IntArrayRef normalized_shape) {
  const IntArrayRef input_shape = input_t.sizes();
  const std::size_t axis = input_shape.size() - normalized_shape.size();
  std::int64_t M = 1, N = 1;
  for (std::size_t d = 0; d < input_shape.size(); ++d) (d < axis ? M : N) *= input_shape[d];

  const Tensor input = reshape(input_t, {M, N});
  const Tensor gO = reshape(gO_t, {M, N});
  const Tensor save_mean = reshape(save_mean_t, {M, 1});
  const Tensor save_invstd = reshape(save_invstd_t, {M, 1});
  const bool affine = gamma.defined();
  Tensor gamma_expanded, ggG_expanded, ggB_expanded;
  if (affine) {
    gamma_expanded = reshape(gamma, {1, N});
    if (ggG.defined()) ggG_expanded = reshape(ggG, {1, N});
    if (ggB.defined()) ggB_expanded = reshape(ggB, {1, N});
  } else {
    gamma_expanded = ones({1}, {.dtype = input.dtype()});
  }
  Tensor ggI_expanded;
  if (ggI.defined()) ggI_expanded = reshape(ggI, {M, N});

  Centred c{N, Tensor(), to(save_invstd, input.dtype()), Tensor()};
  c.input_sub_mu = sub(input, to(save_mean, input.dtype()));
  c.invstd_squared = pow(c.invstd, 2);
  const Tensor invstd_cubed = pow(c.invstd, 3);
  const Tensor input_mu_invstd_cubed = mul(c.input_sub_mu, invstd_cubed);

  // The input's gradient through ggI.
  Tensor gI;
  if (ggI.defined()) {
    const Tensor gxhat = mul(gO, gamma_expanded);
    const Tensor gxhat_mu_sum = sum(mul(gxhat, c.input_sub_mu), {1}, true);
    const Tensor gxhat_sum = sum(gxhat, {1}, true);
    const Tensor ggI_sum = sum(ggI_expanded, {1}, true);
    const Tensor ggI_mu_sum = sum(mul(ggI_expanded, c.input_sub_mu), {1}, true);

    const Tensor all_sub = mul(ggI_sum, gxhat_sum);
    div_(all_sub, N);
    sub_(all_sub, sum(mul(ggI_expanded, gxhat), {1}, true));
    const Tensor cross = mul(mul(c.invstd_squared, gxhat_mu_sum), ggI_mu_sum);
    mul_(cross, Scalar(3. / static_cast<double>(N)));
    add_(all_sub, cross);
    gI = mul(input_mu_invstd_cubed, all_sub);
    div_(gI, N);

    const Tensor gxhat_centred = sub(div(gxhat_sum, N), gxhat);
    const Tensor gI_1t_scale = mul(ggI_mu_sum, invstd_cubed);
    div_(gI_1t_scale, N);
    const Tensor gI_1t = mul(gI_1t_scale, gxhat_centred);
    const Tensor ggI_centred = sub(div(ggI_sum, N), ggI_expanded);
    const Tensor gI_2t_scale = mul(gxhat_mu_sum, invstd_cubed);
    div_(gI_2t_scale, N);
    const Tensor gI_2t = mul(gI_2t_scale, ggI_centred);
    add_(gI, gI_1t);
    add_(gI, gI_2t);
  }

  // The input's gradient through ggG (the weight's gradient depends on the input).
  if (affine && ggG.defined()) {
    const Tensor t0 = mul(mul(gO, ggG_expanded), c.invstd);
    const Tensor gO_ggG_sum = sum(mul(gO, ggG_expanded), {1}, true);
    const Tensor t1 = mul(c.invstd, gO_ggG_sum);
    div_(t1, -N);
    const Tensor projection_sum = sum(mul(mul(gO, ggG_expanded), c.input_sub_mu), {1}, true);
    const Tensor t2 = mul(input_mu_invstd_cubed, projection_sum);
    div_(t2, -N);
    add_(t0, t1);
    add_(t0, t2);
    if (gI.defined()) add_(gI, t0);
    else gI = t0;
  }
  if (gI.defined()) gI = reshape(gI, input_shape);

  // The weight's gradient: the first backward without gamma, against ggI.
  Tensor gG;
  if (affine && ggI.defined()) {
    const Tensor one = ones({}, {.dtype = c.invstd.dtype()});
    gG = first_backward_grad_input(c, ggI_expanded, one);
    gG = sum(mul(gO, gG), {0});
    gG = reshape(gG, gamma.sizes());
  }

  // grad_out's gradient: the first backward is linear in grad_out.
  Tensor ggO;
  if (ggI.defined()) ggO = first_backward_grad_input(c, ggI_expanded, gamma_expanded);
  if (affine && ggG.defined()) {
    const Tensor ggO_G_term = mul(mul(ggG_expanded, c.input_sub_mu), c.invstd);
    if (ggO.defined()) add_(ggO, ggO_G_term);
    else ggO = ggO_G_term;
  }
  if (ggB.defined()) {  // Note [layer_norm's double backward without a weight]
    const Tensor ggO_B_term = affine ? ggB_expanded : reshape(ggB, {1, N});
    if (ggO.defined()) add_(ggO, ggO_B_term);
    else ggO = ggO_B_term;
  }
  if (ggO.defined()) ggO = reshape(expand(ggO, {M, N}), input_shape);
  return {std::move(gI), std::move(gG), std::move(ggO)};
}

}  // namespace strata::autograd
