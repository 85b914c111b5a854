// nn/module.cpp: parameter bookkeeping and repr.
#include "nn/module.h"

#include <sstream>

#include "autograd/variable.h"
#include "ops/functions.h"

namespace strata::nn {

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out = params_;
  if (!recurse) return out;
  for (const auto& [child_name, child] : children_)
    for (auto& [name, p] : child->named_parameters(true)) out.emplace_back(child_name + "." + name, p);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, p] : named_parameters(recurse)) out.push_back(p);
  return out;
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) set_grad(p, Tensor());
    else zero_(p.grad());
  }
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
  return *this;
}

const Tensor& Module::register_parameter(std::string name, const Tensor& t) {
  requires_grad_(t);
  params_.emplace_back(std::move(name), t);
  return params_.back().second;
}

std::string Module::repr() const {
  std::ostringstream out;
  out << type_name() << "(" << extra_repr();
  if (!children_.empty()) {
    out << "\n";
    for (const auto& [name, child] : children_) {
      std::string child_repr = child->repr();
      std::string indented;
      for (char c : child_repr) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
      out << "  (" << name << "): " << indented << "\n";
    }
  }
  out << ")";
  return out.str();
}

}  // namespace strata::nn
