// autograd/registration.cpp: wiring autograd into the dispatcher, once.
#include "autograd/registration.h"

#include <mutex>

#include "autograd/accumulate_grad.h"
#include "autograd/derivative_table.h"
#include "autograd/view_history.h"
#include "core/autograd_meta.h"
#include "core/tensor_format.h"
#include "ops/op_table.h"

namespace strata::autograd {

void register_autograd() {
  static std::once_flag once;
  std::call_once(once, [] {
    ops::register_ops();
    mutable_derivative_table().add(derivative_rows());
    strata::detail::release_node = [](Node* node) noexcept { NodePtr::reclaim(node); };  // Note [Core releases a grad_fn through autograd]
    strata::detail::view_grad_fn = &view_grad_fn;  // Note [Views share their base's history]
    strata::detail::set_node_name_fn([](const Node& node) { return node.name(); });
    // Last: a thread that dispatches into the fallback (which it may do before this call returns,
    // Note [Registration is safe from any thread]) finds everything above in place.
    Dispatcher::singleton().register_fallback(DispatchKey::Autograd, KernelFunction{&autograd_fallback, "autograd"});
  });
}

}  // namespace strata::autograd
