// autograd/gradcheck.cpp: analytical vs numerical Jacobians.
#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/backward.h"
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
      backward(y, tensor<double>(onehot, y.sizes()));
      const Tensor& g = x.grad();
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

}  // namespace strata::autograd
