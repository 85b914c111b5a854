// autograd/gradcheck.cpp: analytical vs numerical Jacobians.
#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {

// Row-major offsets of every element of `t` in its storage.
std::vector<std::int64_t> element_offsets(const Tensor& t) {
  std::vector<std::int64_t> out;
  DimVector index(static_cast<std::size_t>(t.dim()), 0);
  for (std::int64_t n = 0; n < t.numel(); ++n) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < index.size(); ++d) off += index[d] * t.strides()[d];
    out.push_back(off);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// What `fn` returned, checked before anything reads it: a defined float64 tensor, with the probe's
// `n_out` elements on every later call (-1 for the probe itself).
Tensor checked_output(Tensor y, std::int64_t n_out) {
  STRATA_CHECK(y.defined(), "gradcheck: the function returned an undefined tensor; expected a float64 tensor");
  STRATA_CHECK(y.dtype() == ScalarType::Float64, "gradcheck expects a float64 output, got ", y.dtype());
  STRATA_CHECK(n_out < 0 || y.numel() == n_out, "gradcheck: the function returned ", n_out, " elements, then ", y.numel(),
               " for the same inputs");
  return y;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  for (const Tensor& x : inputs)
    STRATA_CHECK(!x.defined() || !x.requires_grad() || x.dtype() == ScalarType::Float64,
                 "gradcheck expects float64 inputs, got ", x.dtype());
  const std::int64_t n_out = checked_output(fn(inputs), -1).numel();

  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.defined() || !x.requires_grad()) continue;
    double* data = x.data_ptr<double>();
    const std::vector<std::int64_t> offsets = element_offsets(x);
    // Analytical: row j of the Jacobian is the gradient of output element j.
    std::vector<std::vector<double>> analytical;
    for (std::int64_t j = 0; j < n_out; ++j) {
      set_grad(x, Tensor());
      for (const Tensor& other : inputs)
        if (other.defined() && other.requires_grad()) set_grad(other, Tensor());
      const Tensor y = checked_output(fn(inputs), n_out);
      std::vector<double> onehot(static_cast<std::size_t>(n_out), 0.0);
      onehot[static_cast<std::size_t>(j)] = 1.0;
      // An output that does not require grad depends on no input: its Jacobian is zero.
      Tensor g;
      if (y.requires_grad() && options.create_graph) {
        GradModeGuard grad_on(true);
        g = grad({y}, {x}, {tensor<double>(onehot, y.sizes())}, std::nullopt, /*create_graph=*/true, /*allow_unused=*/true)[0];
      } else if (y.requires_grad()) {
        backward(y, tensor<double>(onehot, y.sizes()));
        g = x.grad();
      }
      analytical.push_back(g.defined() ? g.to_vector<double>() : std::vector<double>(offsets.size(), 0.0));
    }
    // Numerical: column i from central differences.
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      double& element = data[offsets[i]];
      struct Restore {  // the input's value comes back also when fn throws
        double& element;
        const double saved;
        ~Restore() { element = saved; }
      } restore{element, element};
      NoGradGuard no_grad;
      element = restore.saved + options.eps;
      const std::vector<double> plus = checked_output(fn(inputs), n_out).to_vector<double>();
      element = restore.saved - options.eps;
      const std::vector<double> minus = checked_output(fn(inputs), n_out).to_vector<double>();
      for (std::int64_t j = 0; j < n_out; ++j) {
        const double numerical = (plus[static_cast<std::size_t>(j)] - minus[static_cast<std::size_t>(j)]) / (2 * options.eps);
        const double a = analytical[static_cast<std::size_t>(j)][i];
        if (std::abs(a - numerical) > options.atol + options.rtol * std::abs(numerical)) {
          std::ostringstream msg;
          msg << "Jacobian mismatch for output " << j << " with respect to input " << k << " element " << i
              << ": analytical " << a << ", numerical " << numerical;
          return {false, msg.str()};
        }
      }
    }
  }
  for (const Tensor& x : inputs)
    if (x.defined() && x.requires_grad()) set_grad(x, Tensor());
  return {};
}

GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  GradcheckOptions with_graph = options;
  with_graph.create_graph = true;
  if (GradcheckResult first = gradcheck(fn, inputs, with_graph); !first.ok) {
    first.message = "with create_graph: " + first.message;
    return first;
  }
  const Tensor y = [&] {
    GradModeGuard grad_on(true);  // the caller may run under no_grad
    return checked_output(fn(inputs), -1);
  }();
  Generator generator;
  generator.manual_seed(0);
  std::vector<Tensor> all = inputs;
  all.push_back(randn(y.sizes(), {.dtype = ScalarType::Float64}, &generator));
  requires_grad_(all.back());
  // The first gradient, flattened into one output: d(fn)/d(input) . grad_output for each input that
  // requires grad (zeros where the input does not reach the output).
  const auto first_gradient = [&fn](const std::vector<Tensor>& in) {
    GradModeGuard grad_on(true);  // gradcheck's finite differences run under no_grad
    const std::vector<Tensor> x(in.begin(), in.end() - 1);
    const Tensor out = fn(x);
    std::vector<Tensor> differentiable;
    for (const Tensor& t : x)
      if (t.defined() && t.requires_grad()) differentiable.push_back(t);
    const std::vector<Tensor> grads = grad({out}, differentiable, {in.back()}, std::nullopt, /*create_graph=*/true,
                                           /*allow_unused=*/true);
    std::vector<Tensor> flat;
    for (std::size_t i = 0; i < grads.size(); ++i)
      flat.push_back(reshape(grads[i].defined() ? grads[i] : zeros_like(differentiable[i]), {-1}));
    return flat.empty() ? zeros({0}, {.dtype = ScalarType::Float64}) : cat(flat);
  };
  return gradcheck(first_gradient, all, options);
}

}  // namespace strata::autograd
