// autograd/custom_function.h: custom autograd functions, LibTorch's torch::autograd::Function<T>.
// A user struct with a static forward (run below autograd, recording nothing) and a static backward
// becomes one node of the graph, `<T>Backward`, whose backward is the user's. The context carries
// what forward keeps for backward (saved tensors with their version check, saved_data) and what it
// declares about its outputs (mark_dirty, mark_non_differentiable). Semantics follow PyTorch's
// custom_function.{h,cpp} (_wrap_outputs, CppNode::apply).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "grad_mode.h"
#include "node.h"
#include "saved_variable.h"
#include "../core/dispatch/ivalue.h"

namespace strata::autograd {

class CustomFunctionNode;

// What forward hands to backward (PyTorch's AutogradContext).
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Non-tensor data for backward (PyTorch's ctx->saved_data["n"] = n).
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors for backward, saved when forward returns (inputs as themselves, outputs without their
  // history) and checked for in-place changes when backward unpacks them. Undefined tensors may be
  // saved and come back undefined. Call at most once, from forward.
  void save_for_backward(variable_list to_save);
  // Inputs forward modified in place: they are returned with this function as their new history,
  // and their version is bumped. Each must be returned as an output. Call at most once, from forward.
  void mark_dirty(const variable_list& inputs);
  // Outputs that do not require grad (an integer mask, an index). Call at most once, from forward.
  void mark_non_differentiable(const variable_list& outputs);
  // Whether backward receives zeros (true, the default) or undefined tensors for outputs whose
  // gradient did not arrive.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

  // The tensors save_for_backward kept. Throws PyTorch's "modified by an inplace operation" error if
  // one was written since, and its "backward through the graph a second time" error once released.
  variable_list get_saved_variables() const;
  // Whether the gradient of tensor input `i` (counting tensor arguments of forward only) is wanted.
  bool needs_input_grad(std::size_t i) const;

 private:
  friend class CustomFunctionNode;
  friend class CustomFunctionCall;

  std::vector<const TensorImpl*> dirty_;
  std::vector<const TensorImpl*> non_differentiable_;
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  bool materialize_grads_ = true;
  bool freed_ = false;
  const CustomFunctionNode* node_ = nullptr;  // the node that owns this context
};

// The node of one Function<T>::apply: runs T::backward with the node's context.
class CustomFunctionNode final : public Node {
 public:
  using BackwardFn = variable_list (*)(AutogradContext*, variable_list);
  CustomFunctionNode(std::string_view name, BackwardFn backward, edge_list&& edges, std::vector<bool>&& is_tensor_input);

  std::string_view name() const override { return name_; }
  variable_list apply(std::span<Tensor> grads) override;
  void release_variables() override;
  AutogradContext& context() { return ctx_; }

 private:
  std::string_view name_;  // static storage: one string per T
  BackwardFn backward_;
  std::vector<bool> is_tensor_input_;  // per forward argument
  std::mutex mutex_;  // backward may run on several threads; the context is the user's (PyTorch's CppNode lock)
  AutogradContext ctx_;
};

// The work of one apply() that does not depend on T (custom_function.cpp).
class CustomFunctionCall {
 public:
  CustomFunctionCall(std::string_view name, CustomFunctionNode::BackwardFn backward) : name_(name), backward_(backward) {}

  // Forward's arguments, in order: tensors are the node's inputs, anything else is not.
  void add_argument(const Tensor& t) { add_tensor(t); }
  void add_argument(const std::optional<Tensor>& t) {
    if (t && t->defined()) add_tensor(*t);
    else is_tensor_input_.push_back(false);
  }
  void add_argument(const std::vector<Tensor>& list) {
    for (const Tensor& t : list) add_tensor(t);
  }
  template <typename T>
  void add_argument(const T&) {
    is_tensor_input_.push_back(false);
  }

  // Makes the node (with edges when grad mode is on and an input requires grad) and returns the
  // context forward receives.
  AutogradContext* begin();
  // PyTorch's _wrap_outputs: gives the outputs their history (or detaches, or views, them as the
  // context says), checks mark_dirty's promises, then saves the tensors save_for_backward named.
  variable_list finish(variable_list outputs);

 private:
  void add_tensor(const Tensor& t) {
    is_tensor_input_.push_back(true);
    inputs_.push_back(t);
  }

  std::string_view name_;
  CustomFunctionNode::BackwardFn backward_;
  std::vector<bool> is_tensor_input_;
  variable_list inputs_;
  NodePtr node_;
  bool executable_ = false;
};

namespace detail {
// "MyFnBackward" for a struct named (in any namespace) MyFn: PyTorch's name for a custom function's node.
std::string function_node_name(const char* mangled_type_name);
template <typename T>
std::string_view function_node_name() {
  static const std::string name = function_node_name(typeid(T).name());
  return name;
}
inline variable_list to_variable_list(Tensor t) { return variable_list{std::move(t)}; }
inline variable_list to_variable_list(variable_list v) { return v; }
inline variable_list to_variable_list(const std::vector<Tensor>& v) { return variable_list(ArrayRef<Tensor>(v)); }
}  // namespace detail

// Subclass as `struct MyFn : Function<MyFn>` with
//   static Tensor (or variable_list) forward(AutogradContext* ctx, <any arguments>);
//   static variable_list backward(AutogradContext* ctx, variable_list grad_outputs);
// and call MyFn::apply(<arguments>). backward returns one gradient per forward argument (undefined
// for non-tensor arguments and for inputs that get none); extra trailing undefined ones are allowed.
template <class T>
struct Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args) -> std::enable_if_t<std::is_same_v<X, T>, decltype(X::forward(nullptr, std::declval<Args>()...))> {
    using Result = decltype(X::forward(nullptr, std::declval<Args>()...));
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list> ||
                      std::is_same_v<Result, std::vector<Tensor>>,
                  "Function<T>::forward returns a Tensor, a variable_list or a std::vector<Tensor>");
    CustomFunctionCall call(detail::function_node_name<T>(), &X::backward);
    (call.add_argument(args), ...);
    AutogradContext* ctx = call.begin();
    variable_list outputs;
    {
      NoGradGuard below_autograd;  // forward records nothing
      outputs = detail::to_variable_list(X::forward(ctx, std::forward<Args>(args)...));
    }
    variable_list wrapped = call.finish(std::move(outputs));
    if constexpr (std::is_same_v<Result, Tensor>) return std::move(wrapped[0]);
    else if constexpr (std::is_same_v<Result, variable_list>) return wrapped;
    else return std::vector<Tensor>(wrapped.begin(), wrapped.end());
  }
};

}  // namespace strata::autograd
