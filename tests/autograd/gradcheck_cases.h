// tests/autograd/gradcheck_cases.h: one case per derivative-table formula (several for some): the
// op's inputs in float64 and a function of them. test_gradcheck.cpp gradchecks each, and
// test_dispatch_order.cpp records the ops each dispatches forward and backward.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace strata::testing {

struct GradcheckCase {
  std::string op;  // the derivative-table op it covers ("aten::addmm" or "aten::add.Tensor")
  std::string variant;
  std::function<std::vector<Tensor>()> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

// A float64 leaf of `sizes` that requires grad: standard normal values plus `shift`.
Tensor input(std::initializer_list<std::int64_t> sizes, double shift = 0);

// The cases, in a fixed order; inputs() draws from the global generator (seed it first).
std::vector<GradcheckCase> gradcheck_cases();

}  // namespace strata::testing
