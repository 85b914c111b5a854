// ops/op_table.cpp: registering the op families (see Note [Registration on first use]).
#include "ops/op_table.h"

#include "ops/composite_op.h"

namespace strata::ops {

void register_ops() {
  // A function-local static, not std::call_once: later calls cost one load of its guard, where
  // call_once's cost a library call. Both run the body exactly once and retry it if it threw.
  [[maybe_unused]] static const bool registered = [] {
    Dispatcher& d = Dispatcher::singleton();
    register_view_ops(d);
    register_pointwise_ops(d);
    register_linalg_ops(d);
    register_reduction_ops(d);
    register_softmax_ops(d);
    register_loss_ops(d);
    register_factory_ops(d);
    register_random_ops(d);
    register_profiler_ops(d);
    register_lift_fresh(d);
    register_activation_ops(d);
    register_max_ops(d);
    register_compare_ops(d);
    register_embedding_ops(d);
    register_dropout_ops(d);
    register_norm_ops(d);
    register_vector_ops(d);
    register_join_ops(d);
    register_pad_ops(d);
    register_split_ops(d);
    register_composite_ops(d);
    register_scatter_ops(d);
    register_math_ops(d);
    register_mask_ops(d);
    register_scan_ops(d);
    return true;
  }();
}

OperatorHandle op(std::string_view qualified_name, std::string_view overload) {
  register_ops();
  return Dispatcher::singleton().find_or_throw(qualified_name, overload);
}

}  // namespace strata::ops
