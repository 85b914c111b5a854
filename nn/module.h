// nn/module.h: nn.Module: named parameters and submodules, parameters(), zero_grad(), train()/eval()
// and a PyTorch-style repr. Modules here map one tensor to one tensor (forward(input)).
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/tensor.h"
#include "module_hooks.h"

namespace strata::nn {

// What load_state_dict(strict=false) skipped (PyTorch's _IncompatibleKeys).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;     // parameters the state has no entry for, in module order
  std::vector<std::string> unexpected_keys;  // entries that name no parameter
};

class Module {
 public:
  virtual ~Module() = default;
  virtual Tensor forward(const Tensor& input) = 0;
  // PyTorch's Module.__call__: forward, with the global hooks of nn/module_hooks.h around it.
  Tensor operator()(const Tensor& input) {
    if (!detail::module_hooks_registered() && !own_hooks_) [[likely]] return forward(input);
    return detail::call_module_with_hooks(*this, input);
  }

  // PyTorch's module.register_forward_pre_hook / register_forward_hook: hooks of this module alone,
  // run by operator() after the global ones of the same kind (as _call_impl orders them), in
  // registration order, with the same replacing rules (Note [Global module hooks]). They live as long
  // as the module (no handle: nothing here removes one).
  void register_forward_pre_hook(ForwardPreHook hook);
  void register_forward_hook(ForwardHook hook);
  const detail::ModuleOwnHooks* own_hooks() const { return own_hooks_.get(); }

  // PyTorch's module.register_parameter(name, param) on a name the module already has: the parameter
  // `name` of this module becomes `t` (used as it is: its requires_grad is the caller's), and the
  // module reads its parameter fields again (Linear's weight()). An error if there is no such parameter.
  void replace_parameter(std::string_view name, const Tensor& t);

  // Parameters in registration order, this module's first, then each child's ("0.weight", ...); a
  // parameter or module reached twice is listed once, under its first name (Note [Shared parameters
  // are listed once]).
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }

  // PyTorch's state_dict(): each parameter, detached (sharing its storage), under every name it is
  // reached by ("0.weight", "2.bias"; a shared parameter under each of its names), in registration
  // order. Save it with save_safetensors(path, {state.begin(), state.end()}).
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  // PyTorch's load_state_dict: copies each entry into the parameter of that name (converting dtype,
  // recording no autograd). Throws strata::Error with PyTorch's message ("Error(s) in loading
  // state_dict for Sequential: ...") on a shape mismatch, and on missing or unexpected keys when
  // strict; returns the keys it skipped otherwise. Unlike PyTorch, nothing is copied when it throws.
  IncompatibleKeys load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

  // set_to_none=true drops the gradients (PyTorch's default); false detaches them in place and zeroes
  // them (nn::zero_grad_).
  void zero_grad(bool set_to_none = true);
  // PyTorch's Module.to(dtype): converts every floating parameter (and its gradient) to `dtype`,
  // which must be floating. Unlike PyTorch, whose parameters keep their identity (param.data = ...),
  // each converted parameter is a new tensor: build optimizers after to(), as PyTorch's docs advise.
  Module& to(ScalarType dtype);
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  // PyTorch's repr: "Linear(in_features=16, out_features=32, bias=True)", children indented.
  std::string repr() const;

 protected:
  friend class ModTracker;  // names a module by its type_name()
  // The type name and the text between the parentheses of repr() (PyTorch's extra_repr).
  virtual std::string type_name() const = 0;
  virtual std::string extra_repr() const { return ""; }

  // Makes `t` a parameter (a leaf that requires grad) and returns it.
  const Tensor& register_parameter(std::string name, const Tensor& t);
  // This module's own parameter `name` (registered, else an error).
  const Tensor& parameter(std::string_view name) const;
  // Called after to() replaced this module's parameters: a module holding its parameters in fields
  // of its own (Linear's weight_) reads them again.
  virtual void parameters_replaced() {}
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  // Appends (prefix + name, module) for this module and every module under it, each name it is reached by.
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, const Module*>>& out) const;
  // to()'s walk: each module once, each parameter tensor converted once (a shared one stays shared).
  void convert_parameters(ScalarType dtype, std::vector<std::pair<const TensorImpl*, Tensor>>& converted,
                          std::vector<const Module*>& seen_modules);
  void collect_parameters(const std::string& prefix, bool recurse, std::vector<const Module*>& seen_modules,
                          std::vector<std::pair<std::string, Tensor>>& out) const;

  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  std::shared_ptr<detail::ModuleOwnHooks> own_hooks_;  // null until a hook of this module is registered
};

// One parameter's share of zero_grad (Module's and Optimizer's): drop the gradient, or detach it in
// place (p.grad.detach_(), or requires_grad_(False) when it has no history) and zero it.
void zero_grad_(const Tensor& param, bool set_to_none);

// `std::cout << model`: the module's repr(), as PyTorch prints a module.
inline std::ostream& operator<<(std::ostream& out, const Module& module) { return out << module.repr(); }

}  // namespace strata::nn
