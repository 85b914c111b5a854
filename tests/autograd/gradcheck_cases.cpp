// tests/autograd/gradcheck_cases.cpp: the derivative-table cases (gradcheck_cases.h).
#include "tests/autograd/gradcheck_cases.h"

#include "autograd/variable.h"
#include "ops/functions.h"

namespace strata::testing {

Tensor input(std::initializer_list<std::int64_t> sizes, double shift) {
  Tensor t = add(randn(sizes, {.dtype = ScalarType::Float64}), scalar_tensor(shift, ScalarType::Float64));
  requires_grad_(t);
  return t;
}

namespace {

Tensor constant(std::initializer_list<std::int64_t> sizes) { return randn(sizes, {.dtype = ScalarType::Float64}); }

}  // namespace

std::vector<GradcheckCase> gradcheck_cases() {
  using V = std::vector<Tensor>;
  const Tensor target = tensor<std::int64_t>({0, 2, 1, 2});
  return {
      {"aten::t", "", [] { return V{input({3, 4})}; }, [](const V& x) { return t(x[0]); }},
      {"aten::transpose.int", "", [] { return V{input({2, 3, 4})}; }, [](const V& x) { return transpose(x[0], 0, 2); }},
      {"aten::view", "", [] { return V{input({3, 4})}; }, [](const V& x) { return view(x[0], {2, 6}); }},
      {"aten::_unsafe_view", "", [] { return V{input({3, 4})}; }, [](const V& x) { return _unsafe_view(mul(x[0], x[0]), {2, 6}); }},
      {"aten::expand", "", [] { return V{input({3, 1})}; }, [](const V& x) { return expand(x[0], {2, 3, 4}); }},
      {"aten::as_strided", "every other element, from offset 1", [] { return V{input({5})}; },
       [](const V& x) { return as_strided(x[0], {2}, {2}, 1); }},
      {"aten::as_strided", "transposed, size-1 and expanded dims", [] { return V{input({3, 4})}; },
       [](const V& x) { return as_strided(x[0], {4, 1, 2, 3}, {1, 7, 0, 4}); }},
      {"aten::as_strided", "of a view with an offset (offset None keeps it)", [] { return V{input({8})}; },
       [](const V& x) { return as_strided(as_strided(x[0], {2, 3}, {1, 2}, 2), {3}, {2}); }},
      {"aten::unsqueeze", "", [] { return V{input({3, 4})}; }, [](const V& x) { return unsqueeze(x[0], 1); }},
      {"aten::squeeze.dim", "", [] { return V{input({3, 1, 4})}; }, [](const V& x) { return squeeze(x[0], 1); }},
      {"aten::select.int", "", [] { return V{input({3, 4})}; }, [](const V& x) { return select(x[0], -1, 1); }},
      {"aten::slice.Tensor", "start, end, step", [] { return V{input({3, 7})}; }, [](const V& x) { return slice(x[0], 1, -6, 6, 2); }},
      {"aten::slice.Tensor", "narrow", [] { return V{input({5, 2})}; }, [](const V& x) { return narrow(x[0], 0, 1, 3); }},
      {"aten::select_backward", "", [] { return V{input({4})}; }, [](const V& x) { return select_backward(x[0], {3, 4}, 0, 2); }},
      {"aten::slice_backward", "", [] { return V{input({2, 2})}; },
       [](const V& x) { return slice_backward(x[0], {2, 5}, 1, 1, 5, 2); }},
      {"aten::cat", "", [] { return V{input({2, 3}), input({2, 1}), input({0})}; },
       [](const V& x) { return cat({x[0], x[1], x[2]}, 1); }},
      {"aten::stack", "new last dim", [] { return V{input({2, 3}), input({2, 3})}; }, [](const V& x) { return stack({x[0], x[1]}, 2); }},
      {"aten::stack", "dim 0, three inputs", [] { return V{input({3}), input({3}), input({3})}; },
       [](const V& x) { return stack({x[0], x[1], x[2]}, -2); }},
      {"aten::clone", "", [] { return V{input({3, 4})}; }, [](const V& x) { return clone(t(x[0])); }},
      {"aten::_to_copy", "", [] { return V{input({3})}; },
       [](const V& x) {  // float64 -> float64, so the check keeps double precision (to() would skip it)
         return detail::call_op(ops::op("aten::_to_copy"), x[0], ScalarType::Float64, IValue(), IValue(), IValue(), false,
                                IValue());
       }},
      {"aten::mm", "", [] { return V{input({3, 4}), input({4, 2})}; }, [](const V& x) { return mm(x[0], x[1]); }},
      {"aten::mm", "column-major operands", [] { return V{input({4, 3}), input({2, 4})}; },
       [](const V& x) { return mm(t(x[0]), t(x[1])); }},
      {"aten::addmm", "", [] { return V{input({2}), input({3, 4}), input({4, 2})}; },
       [](const V& x) { return addmm(x[0], x[1], x[2]); }},
      {"aten::addmm", "beta, alpha, column-major mat2", [] { return V{input({3, 2}), input({3, 4}), input({2, 4})}; },
       [](const V& x) { return addmm(x[0], x[1], t(x[2]), 0.5, -2.0); }},
      {"aten::sum.dim_IntList", "", [] { return V{input({2, 3, 4})}; }, [](const V& x) { return sum(x[0], {0, 2}); }},
      {"aten::sum.dim_IntList", "keepdim", [] { return V{input({2, 3})}; }, [](const V& x) { return sum(x[0], {1}, true); }},
      {"aten::sum", "", [] { return V{input({2, 3})}; }, [](const V& x) { return sum(x[0]); }},
      {"aten::relu", "", [] { return V{input({10})}; }, [](const V& x) { return relu(x[0]); }},
      {"aten::threshold_backward", "", [] { return V{input({10}), constant({10})}; },
       [](const V& x) { return threshold_backward(x[0], x[1], 0.1); }},
      {"aten::_log_softmax", "", [] { return V{input({3, 5})}; }, [](const V& x) { return _log_softmax(x[0], 1); }},
      {"aten::_log_softmax", "dim 0", [] { return V{input({3, 5})}; }, [](const V& x) { return _log_softmax(x[0], 0); }},
      // Both inputs: the gradient and a log_softmax output (any tensor works for the formula's algebra).
      {"aten::_log_softmax_backward_data", "", [] { return V{input({3, 5}), input({3, 5})}; },
       [](const V& x) { return _log_softmax_backward_data(x[0], _log_softmax(x[1], 1), 1, ScalarType::Float64); }},
      {"aten::exp", "", [] { return V{input({6})}; }, [](const V& x) { return exp(x[0]); }},
      {"aten::reciprocal", "away from zero", [] { return V{input({6})}; }, [](const V& x) { return reciprocal(add(exp(x[0]), Scalar(0.5))); }},
      {"aten::nll_loss_forward", "mean", [] { return V{input({4, 3})}; },
       [target](const V& x) { return std::get<0>(nll_loss_forward(x[0], target, Tensor(), 1, -100)); }},
      {"aten::nll_loss_forward", "weighted sum, ignore_index", [] { return V{input({4, 3})}; },
       [target](const V& x) {
         return std::get<0>(nll_loss_forward(x[0], target, tensor<double>({0.2, 1.0, 3.0}), 2, 1));
       }},
      {"aten::nll_loss_backward", "", [] { return V{input({4})}; },
       [target](const V& x) {
         const Tensor self = constant({4, 3});
         return nll_loss_backward(x[0], self, target, Tensor(), 0, -100, scalar_tensor(4.0, ScalarType::Float64));
       }},
      {"aten::add.Tensor", "broadcast, alpha", [] { return V{input({2, 3}), input({3})}; },
       [](const V& x) { return add(x[0], x[1], 2.5); }},
      {"aten::sub.Tensor", "alpha", [] { return V{input({2, 3}), input({2, 3})}; },
       [](const V& x) { return sub(x[0], x[1], 0.5); }},
      {"aten::mul.Tensor", "broadcast", [] { return V{input({2, 3}), input({2, 1})}; },
       [](const V& x) { return mul(x[0], x[1]); }},
      {"aten::mul.Scalar", "", [] { return V{input({2, 3})}; }, [](const V& x) { return mul(x[0], Scalar(-1.5)); }},
      {"aten::div.Tensor", "", [] { return V{input({2, 3}), input({3}, 3.0)}; }, [](const V& x) { return div(x[0], x[1]); }},
      {"aten::neg", "", [] { return V{input({4})}; }, [](const V& x) { return neg(x[0]); }},
      {"aten::add_.Tensor", "", [] { return V{input({2, 3}), input({3})}; },
       [](const V& x) { return add_(mul(x[0], x[0]), x[1], -1.5); }},
      {"aten::add.Scalar", "", [] { return V{input({2, 3})}; }, [](const V& x) { return add(x[0], Scalar(1.5), 2.0); }},
      {"aten::mul_.Tensor", "", [] { return V{input({2, 3}), input({3})}; },
       [](const V& x) { return mul_(mul(x[0], x[0]), x[1]); }},
      {"aten::fill_.Scalar", "", [] { return V{input({3})}; }, [](const V& x) { return add(fill_(clone(x[0]), 2.0), x[0]); }},
      {"aten::zero_", "", [] { return V{input({3})}; }, [](const V& x) { return add(zero_(clone(x[0])), x[0]); }},
      {"aten::sigmoid", "", [] { return V{input({3, 4})}; }, [](const V& x) { return sigmoid(x[0]); }},
      {"aten::sigmoid_backward", "", [] { return V{input({6}), input({6})}; },
       [](const V& x) { return sigmoid_backward(x[0], x[1]); }},
      {"aten::tanh", "", [] { return V{input({3, 4})}; }, [](const V& x) { return tanh(x[0]); }},
      {"aten::tanh_backward", "", [] { return V{input({6}), input({6})}; }, [](const V& x) { return tanh_backward(x[0], x[1]); }},
      {"aten::gelu", "none", [] { return V{input({8})}; }, [](const V& x) { return gelu(x[0]); }},
      {"aten::gelu", "tanh", [] { return V{input({8})}; }, [](const V& x) { return gelu(x[0], "tanh"); }},
      {"aten::gelu_backward", "none", [] { return V{input({6}), input({6})}; }, [](const V& x) { return gelu_backward(x[0], x[1]); }},
      {"aten::gelu_backward", "tanh", [] { return V{input({6}), input({6})}; },
       [](const V& x) { return gelu_backward(x[0], x[1], "tanh"); }},
      {"aten::_softmax", "", [] { return V{input({3, 5})}; }, [](const V& x) { return _softmax(x[0], 1); }},
      {"aten::_softmax", "dim 0, transposed", [] { return V{input({5, 3})}; }, [](const V& x) { return _softmax(t(x[0]), 0); }},
      // Both inputs: the formulas hold for any output tensor, not only a softmax's.
      {"aten::_softmax_backward_data", "", [] { return V{input({3, 5}), input({3, 5})}; },
       [](const V& x) { return _softmax_backward_data(x[0], x[1], 1, ScalarType::Float64); }},
      {"aten::mean", "", [] { return V{input({3, 4})}; }, [](const V& x) { return mean(x[0]); }},
      {"aten::mean.dim", "", [] { return V{input({2, 3, 4})}; }, [](const V& x) { return mean(x[0], {0, 2}); }},
      {"aten::mean.dim", "keepdim", [] { return V{input({2, 3})}; }, [](const V& x) { return mean(x[0], {1}, true); }},
      {"aten::max", "", [] { return V{input({3, 4})}; }, [](const V& x) { return max(x[0]); }},
      // Each element twice: the maximum is a tie of two copies, each given half the gradient.
      {"aten::max", "ties share the gradient", [] { return V{input({4})}; },
       [](const V& x) { return max(expand(unsqueeze(x[0], 0), {2, 4})); }},
      {"aten::max.dim", "", [] { return V{input({3, 4})}; }, [](const V& x) { return std::get<0>(max(x[0], 1)); }},
      {"aten::max.dim", "keepdim, dim 0", [] { return V{input({3, 4})}; }, [](const V& x) { return std::get<0>(max(x[0], 0, true)); }},
      // padding_idx's row and scale_grad_by_freq's scaling are deliberately not the true derivative (their
      // gradients are checked against PyTorch's in test_inference_ops.cpp), so the padding row is not
      // picked here and no index repeats under scale_grad_by_freq.
      {"aten::embedding", "repeated indices, padding_idx not picked", [] { return V{input({5, 3})}; },
       [](const V& x) { return embedding(x[0], tensor<std::int64_t>({1, 4, 1, 0, 4, 2}, {2, 3}), 3); }},
      {"aten::embedding", "scale_grad_by_freq, distinct indices", [] { return V{input({5, 3})}; },
       [](const V& x) { return embedding(x[0], tensor<std::int64_t>({1, 4, 0}), -1, true); }},
      {"aten::embedding_dense_backward", "", [] { return V{input({2, 3, 3})}; },
       [](const V& x) { return embedding_dense_backward(x[0], tensor<std::int64_t>({1, 4, 1, 0, 4, 2}, {2, 3}), 6, 1, false); }},
      // The same seed before each call, so every evaluation drops the same elements.
      {"aten::native_dropout", "", [] { return V{input({4, 5})}; },
       [](const V& x) {
         manual_seed(4);
         return std::get<0>(native_dropout(x[0], 0.3, true));
       }},
      {"aten::native_dropout_backward", "", [] { return V{input({5})}; },
       [](const V& x) { return native_dropout_backward(x[0], tensor<bool>({true, false, true, true, false}), 1 / 0.7); }},
      // Index 2 is picked twice in row 0 and index 0 twice in column 1 of the scatter_add: gradients add up.
      {"aten::gather", "", [] { return V{input({2, 3})}; },
       [](const V& x) { return gather(x[0], 1, tensor<std::int64_t>({2, 2, 0, 1}, {2, 2})); }},
      {"aten::scatter.src", "", [] { return V{input({2, 3}), input({2, 2})}; },
       [](const V& x) { return scatter(x[0], 1, tensor<std::int64_t>({2, 0, 1, 2}, {2, 2}), x[1]); }},
      {"aten::scatter.value", "", [] { return V{input({2, 3})}; },
       [](const V& x) { return scatter(x[0], 0, tensor<std::int64_t>({1, 0, 1}, {1, 3}), Scalar(4.0)); }},
      {"aten::scatter_add", "", [] { return V{input({2, 3}), input({2, 2})}; },
       [](const V& x) { return scatter_add(x[0], 0, tensor<std::int64_t>({0, 0, 1, 0}, {2, 2}), x[1]); }},
      {"aten::div_.Scalar", "", [] { return V{input({2, 3})}; }, [](const V& x) { return div_(clone(x[0]), 2.5); }},
      // dropout on CPU is input * noise (Note [dropout on CPU is bernoulli noise]): the same seed each call.
      {"aten::mul.Tensor", "dropout's output", [] { return V{input({4, 5})}; },
       [](const V& x) {
         manual_seed(4);
         return dropout(x[0], 0.3, true);
       }},
      {"aten::copy_", "broadcast src", [] { return V{input({2, 3}), input({3})}; },
       [](const V& x) { return copy_(mul(x[0], x[0]), x[1]); }},
  };
}

}  // namespace strata::testing
