// autograd/custom_function.cpp: what Function<T>::apply does that does not depend on T: the node,
// the outputs' history (PyTorch's _process_backward_mode_ad), the context's saved tensors, and the
// checks on what backward returns (CppNode::apply).
#include "autograd/custom_function.h"

#include <algorithm>
#include <cxxabi.h>
#include <memory>

#include "autograd/variable.h"
#include "autograd/view_history.h"
#include "core/util/warning.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::autograd {

namespace {
bool contains(const std::vector<const TensorImpl*>& set, const TensorImpl* impl) {
  return std::find(set.begin(), set.end(), impl) != set.end();
}
std::vector<const TensorImpl*> impls_of(const variable_list& tensors) {
  std::vector<const TensorImpl*> out;
  for (const Tensor& t : tensors)
    if (t.defined()) out.push_back(t.impl());
  return out;
}

// Note [A custom function returns its input as a view]
// An input forward returns unmodified cannot take the function's node as its history: it is the
// caller's tensor, and its own history (or leafness) must survive. PyTorch returns `input.view_as(input)`
// instead, made under no_grad, and gives that alias the node; a mode sees the `view`. A
// non-differentiable output that is an input likewise comes back as such a view (when it does not
// require grad) or detached (when it does).
Tensor view_as_self_without_grad(const Tensor& self) {
  NoGradGuard no_grad;
  return view(self, self.sizes());
}
}  // namespace

// ---- AutogradContext ----
void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) { dirty_ = impls_of(inputs); }

void AutogradContext::mark_non_differentiable(const variable_list& outputs) { non_differentiable_ = impls_of(outputs); }

variable_list AutogradContext::get_saved_variables() const {
  STRATA_CHECK(!freed_, kBackwardTwiceMessage);
  variable_list out;
  Node* saved_for = const_cast<CustomFunctionNode*>(node_);
  for (const SavedVariable& v : saved_) out.push_back(v.unpack(saved_for));
  return out;
}

bool AutogradContext::needs_input_grad(std::size_t i) const { return node_ && node_->task_should_compute_output(i); }

// ---- CustomFunctionNode ----
CustomFunctionNode::CustomFunctionNode(std::string_view name, BackwardFn backward, edge_list&& edges,
                                       std::vector<bool>&& is_tensor_input)
    : Node(next_sequence_nr(), std::move(edges)),
      name_(name),
      backward_(backward),
      is_tensor_input_(std::move(is_tensor_input)) {
  ctx_.node_ = this;
}

variable_list CustomFunctionNode::apply(std::span<Tensor> grads) {
  variable_list grad_outputs;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined() || !ctx_.materialize_grads_) {
      grad_outputs.push_back(std::move(grads[i]));
      continue;
    }
    const InputMetadata& meta = input_metadata(i);  // zeros shaped like forward's output i (VariableInfo::zeros)
    grad_outputs.push_back(zeros(meta.sizes, {meta.dtype, meta.device}));
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  variable_list outputs = backward_(&ctx_, std::move(grad_outputs));

  // Too many gradients are fine if the extra ones are undefined (PyTorch truncates them).
  const std::size_t expected = is_tensor_input_.size();
  if (outputs.size() > expected &&
      std::none_of(outputs.begin() + expected, outputs.end(), [](const Tensor& g) { return g.defined(); }))
    outputs.truncate(expected);
  STRATA_CHECK(outputs.size() == expected, "function ", name(), " returned an incorrect number of gradients (expected ",
               expected, ", got ", outputs.size(), ")");
  variable_list results;
  for (std::size_t i = 0; i < expected; ++i) {
    if (!is_tensor_input_[i]) {
      STRATA_CHECK(!outputs[i].defined(), "function ", name(), " returned a gradient different that is defined at position ",
                   i + 1, ", but the corresponding forward input was not a Variable");
      continue;
    }
    results.push_back(std::move(outputs[i]));
  }
  return results;
}

void CustomFunctionNode::release_variables() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ctx_.saved_.clear();
  ctx_.freed_ = true;
}

// ---- CustomFunctionCall ----
AutogradContext* CustomFunctionCall::begin() {
  executable_ = is_grad_enabled() &&
                std::any_of(inputs_.begin(), inputs_.end(), [](const Tensor& t) { return t.requires_grad(); });
  edge_list edges;
  if (executable_)
    for (const Tensor& t : inputs_) {
      Edge& e = edges.emplace_back();
      if (t.defined()) assign_gradient_edge(e, t);
    }
  node_ = make_node<CustomFunctionNode>(name_, backward_, std::move(edges), std::move(is_tensor_input_));
  return &static_cast<CustomFunctionNode&>(*node_).context();
}

variable_list CustomFunctionCall::finish(variable_list outputs) {
  auto& node = static_cast<CustomFunctionNode&>(*node_);
  AutogradContext& ctx = node.context();
  for (const TensorImpl* dirty : ctx.dirty_) dirty->bump_version();  // PyTorch's get_and_bump_dirty
  const std::vector<const TensorImpl*> inputs = impls_of(inputs_);
  std::vector<const TensorImpl*> returned;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Tensor& var = outputs[i];
    STRATA_CHECK(var.defined(), "function ", name_, " returned an undefined Tensor as output ", i,
                 " from its forward; return a defined tensor");
    const TensorImpl* impl = var.impl();
    returned.push_back(impl);
    const bool is_input = contains(inputs, impl);
    const bool is_modified = contains(ctx.dirty_, impl);
    const bool is_differentiable = executable_ && !contains(ctx.non_differentiable_, impl) && is_floating_point(var.dtype());
    if (executable_) node.add_input_metadata(var);
    const Edge edge{executable_ ? node_ : NodePtr(), static_cast<std::uint32_t>(i)};
    if (!is_differentiable) {
      if (!var.requires_grad()) {
        if (is_input && !is_modified) var = view_as_self_without_grad(var);
      } else {
        var = detach(var);  // an alias without history: the input keeps its own
      }
    } else if (is_modified) {
      STRATA_CHECK(!(var.is_leaf() && var.requires_grad()),
                   "a leaf Variable that requires grad has been used in an in-place operation.");
      if (!is_input)
        STRATA_WARN("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is no need "
                    "to pass it to mark_dirty().");
      STRATA_CHECK(!(view_info(var) && outputs.size() > 1),
                   "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
                   "return more than one Tensor. This is not supported by the current autograd engine. You should either "
                   "make sure the input is not a view (using .clone() for example) or make your Function only return one "
                   "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single "
                   "Tensor and a second one that does the other operations).");
      rebase_history(var, edge);
    } else if (is_input) {
      var = view_as_self_without_grad(var);  // Note [A custom function returns its input as a view]
      set_gradient_edge(var, edge);
    } else {
      set_gradient_edge(var, edge);
    }
  }
  for (const TensorImpl* dirty : ctx.dirty_)
    STRATA_CHECK(contains(returned, dirty),
                 "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
                 "are modified inplace must all be outputs of the Function.");
  if (executable_) {
    // Outputs are saved without their history (the node is it), anything else as itself.
    for (const Tensor& t : ctx.to_save_) {
      SavedVariable& saved = ctx.saved_.emplace_back();
      if (t.defined()) saved.save(t, t.grad_fn() == node_.get());
    }
  }
  ctx.to_save_ = variable_list();
  return outputs;
}

// ---- names ----
std::string detail::function_node_name(const char* mangled_type_name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled_type_name, nullptr, nullptr, &status), std::free);
  const std::string full = status == 0 && demangled ? std::string(demangled.get()) : std::string(mangled_type_name);
  // The last component outside brackets: "ns::Outer::MyFn" and "f()::MyFn" give "MyFn".
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    const char c = full[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    else if (c == '>' || c == ')' || c == ']') --depth;
    else if (depth == 0 && c == ':' && i + 1 < full.size() && full[i + 1] == ':') start = i + 2;
  }
  std::string name = full.substr(start);
  if (const std::size_t bracket = name.find('<'); bracket != std::string::npos) name.resize(bracket);
  return name + "Backward";
}

}  // namespace strata::autograd
