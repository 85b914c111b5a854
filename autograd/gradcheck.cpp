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

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  for (const Tensor& x : inputs)
    STRATA_CHECK(!x.defined() || !x.requires_grad() || x.dtype() == ScalarType::Float64,
                 "gradcheck expects float64 inputs, got ", x.dtype());
  const Tensor probe = fn(inputs);
  STRATA_CHECK(probe.dtype() == ScalarType::Float64, "gradcheck expects a float64 output, got ", probe.dtype());
  const std::int64_t n_out = probe.numel();

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
      const Tensor y = fn(inputs);
      std::vector<double> onehot(static_cast<std::size_t>(n_out), 0.0);
      onehot[static_cast<std::size_t>(j)] = 1.0;
      backward(y, tensor<double>(onehot, y.sizes()));
      const Tensor& g = x.grad();
      analytical.push_back(g.defined() ? g.to_vector<double>() : std::vector<double>(offsets.size(), 0.0));
    }
    // Numerical: column i from central differences.
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const double saved = data[offsets[i]];
      NoGradGuard no_grad;
      data[offsets[i]] = saved + options.eps;
      const std::vector<double> plus = fn(inputs).to_vector<double>();
      data[offsets[i]] = saved - options.eps;
      const std::vector<double> minus = fn(inputs).to_vector<double>();
      data[offsets[i]] = saved;
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
