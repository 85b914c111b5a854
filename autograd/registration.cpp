// autograd/registration.cpp: wiring autograd into the dispatcher, once.
#include "autograd/registration.h"


#include "autograd/accumulate_grad.h"
#include "autograd/formulas/cat_backward.h"
#include "autograd/formulas/split_backward.h"
#include "autograd/derivative_table.h"
#include "autograd/view_history.h"
#include "core/autograd_meta.h"
#include "core/autograd_hooks.h"
#include "ops/op_table.h"

namespace strata::autograd {

namespace {

// Note [Core reaches autograd through one interface]
class Hooks final : public AutogradHooks {
 public:
  void release_node(Node* node) const noexcept override { NodePtr::reclaim(node); }  // Note [Core releases a grad_fn through autograd]
  Node* view_grad_fn(const Tensor& view) const override { return autograd::view_grad_fn(view); }  // Note [Views share their base's history]
  std::string_view node_name(const Node& node) const override { return node.name(); }
};

}  // namespace

void register_autograd() {
  // A function-local static, as in ops::register_ops: every backward() calls this.
  [[maybe_unused]] static const bool registered = [] {
    ops::register_ops();
    mutable_derivative_table().add(derivative_rows());
    static const Hooks hooks;
    set_autograd_hooks(hooks);
    // cat's and stack's Tensor[] get one edge per tensor: their own kernels record the node (autograd/formulas/cat_backward.h).
    Dispatcher::singleton().register_kernel(ops::op("aten::cat"), DispatchKey::Autograd,
                                            KernelFunction{&cat_autograd_kernel, "autograd cat"});
    Dispatcher::singleton().register_kernel(ops::op("aten::stack"), DispatchKey::Autograd,
                                            KernelFunction{&stack_autograd_kernel, "autograd stack"});
    // split's pieces are one node's inputs (autograd/formulas/split_backward.h).
    Dispatcher::singleton().register_kernel(ops::op("aten::split", "Tensor"), DispatchKey::Autograd,
                                            KernelFunction{&split_autograd_kernel, "autograd split"});
    Dispatcher::singleton().register_kernel(ops::op("aten::split_with_sizes"), DispatchKey::Autograd,
                                            KernelFunction{&split_autograd_kernel, "autograd split_with_sizes"});
    // Last: a thread that dispatches into the fallback (which it may do before this call returns,
    // Note [Registration is safe from any thread]) finds everything above in place.
    Dispatcher::singleton().register_fallback(DispatchKey::Autograd, KernelFunction{&autograd_fallback, "autograd"});
    return true;
  }();
}

}  // namespace strata::autograd
