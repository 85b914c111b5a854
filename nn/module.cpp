// nn/module.cpp: parameter bookkeeping and repr.
#include "nn/module.h"

#include <algorithm>
#include <sstream>

#include "autograd/variable.h"
#include "ops/functions.h"

namespace strata::nn {

// Note [Shared parameters are listed once]
// PyTorch's named_parameters() (remove_duplicate=True) walks the modules in pre-order, visiting a
// module reached twice (Sequential(lin, lin)) once, and yields a parameter tensor once, under the
// first name that reaches it. parameters() is what an optimizer is built from, so listing a shared
// Linear twice would make SGD update it twice per step and zero_grad zero it twice.
std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<const Module*> seen_modules;
  std::vector<std::pair<std::string, Tensor>> out;
  collect_parameters("", recurse, seen_modules, out);
  return out;
}

void Module::collect_parameters(const std::string& prefix, bool recurse, std::vector<const Module*>& seen_modules,
                                std::vector<std::pair<std::string, Tensor>>& out) const {
  if (std::find(seen_modules.begin(), seen_modules.end(), this) != seen_modules.end()) return;
  seen_modules.push_back(this);
  for (const auto& param : params_) {  // no structured binding: clang 14 cannot capture one (scripts/fuzz)
    const Tensor& p = param.second;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& named) { return named.second.is_same(p); });
    if (!seen) out.emplace_back(prefix + param.first, p);
  }
  if (!recurse) return;
  for (const auto& [child_name, child] : children_)
    child->collect_parameters(prefix + child_name + ".", true, seen_modules, out);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, p] : named_parameters(recurse)) out.push_back(p);
  return out;
}

void zero_grad_(const Tensor& param, bool set_to_none) {
  const Tensor& grad = param.grad();
  if (!grad.defined()) return;
  if (set_to_none) return set_grad(param, Tensor());
  // A gradient made with create_graph=True has a history; PyTorch cuts it (detach_) before zeroing,
  // so the zeroing is not recorded and the gradient stays the same tensor.
  if (grad.grad_fn()) autograd::set_gradient_edge(grad, autograd::Edge());
  autograd::set_requires_grad(grad, false);
  zero_(grad);
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) zero_grad_(p, set_to_none);
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
  return *this;
}

Module& Module::to(ScalarType dtype) {
  STRATA_CHECK(is_floating_point(dtype) && !is_float8(dtype),
               "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.",
               dtype_name(dtype));
  std::vector<std::pair<const TensorImpl*, Tensor>> converted;
  std::vector<const Module*> seen_modules;
  convert_parameters(dtype, converted, seen_modules);
  return *this;
}

void Module::convert_parameters(ScalarType dtype, std::vector<std::pair<const TensorImpl*, Tensor>>& converted,
                                std::vector<const Module*>& seen_modules) {
  if (std::find(seen_modules.begin(), seen_modules.end(), this) != seen_modules.end()) return;
  seen_modules.push_back(this);
  bool replaced = false;
  for (auto& param : params_) {
    Tensor& p = param.second;
    if (!is_floating_point(p.dtype()) || p.dtype() == dtype) continue;  // PyTorch casts floating parameters only
    const auto done = std::find_if(converted.begin(), converted.end(),
                                   [&](const auto& entry) { return entry.first == p.impl(); });
    if (done != converted.end()) {
      p = done->second;
    } else {
      Tensor q = strata::to(detach(p), dtype);
      if (p.grad().defined()) set_grad(q, strata::to(detach(p.grad()), dtype));
      requires_grad_(q, p.requires_grad());
      converted.emplace_back(p.impl(), q);
      p = q;
    }
    replaced = true;
  }
  if (replaced) parameters_replaced();
  for (const auto& child : children_) child.second->convert_parameters(dtype, converted, seen_modules);
}

const Tensor& Module::parameter(std::string_view name) const {
  for (const auto& param : params_)
    if (param.first == name) return param.second;
  strata::detail::throw_error(strata::detail::str_cat(type_name(), " has no parameter '", name, "'"));
}

void Module::register_forward_pre_hook(ForwardPreHook hook) {
  STRATA_CHECK(hook, type_name(), ".register_forward_pre_hook: the hook is empty");
  if (!own_hooks_) own_hooks_ = std::make_shared<detail::ModuleOwnHooks>();
  own_hooks_->pre.push_back(std::make_shared<const ForwardPreHook>(std::move(hook)));
}

void Module::register_forward_hook(ForwardHook hook) {
  STRATA_CHECK(hook, type_name(), ".register_forward_hook: the hook is empty");
  if (!own_hooks_) own_hooks_ = std::make_shared<detail::ModuleOwnHooks>();
  own_hooks_->post.push_back(std::make_shared<const ForwardHook>(std::move(hook)));
}

void Module::replace_parameter(std::string_view name, const Tensor& t) {
  STRATA_CHECK(t.defined(), type_name(), ".replace_parameter('", name, "'): the tensor is undefined");
  for (auto& param : params_)
    if (param.first == name) {
      param.second = t;
      parameters_replaced();
      return;
    }
  strata::detail::throw_error(strata::detail::str_cat(type_name(), " has no parameter '", name, "'"));
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
