// ops/op_table.h: strata's op table, registered into the dispatcher on first use, and lookup of op
// handles by PyTorch name. Each op family registers its rows from its own file.
#pragma once

#include <string_view>

#include "../core/dispatch/dispatcher.h"

namespace strata::ops {

// Registers every op row once (thread-safe); later calls return immediately.
void register_ops();

// The handle of a registered op, e.g. op("aten::add", "Tensor"); registers the table first if needed.
// Resolve once and keep the handle (front ends hold it in a function-local static).
OperatorHandle op(std::string_view qualified_name, std::string_view overload = "");

// One registration function per op family (see the file of the same name).
void register_view_ops(Dispatcher& d);
void register_join_ops(Dispatcher& d);
void register_pad_ops(Dispatcher& d);
void register_split_ops(Dispatcher& d);  // ops/split_ops.cpp: split.Tensor, split_with_sizes (boxed)
void register_scatter_ops(Dispatcher& d);
void register_math_ops(Dispatcher& d);
void register_mask_ops(Dispatcher& d);
void register_pointwise_ops(Dispatcher& d);
void register_linalg_ops(Dispatcher& d);
void register_reduction_ops(Dispatcher& d);
void register_softmax_ops(Dispatcher& d);
void register_loss_ops(Dispatcher& d);
void register_factory_ops(Dispatcher& d);
void register_random_ops(Dispatcher& d);
void register_profiler_ops(Dispatcher& d);
void register_activation_ops(Dispatcher& d);
void register_max_ops(Dispatcher& d);
void register_compare_ops(Dispatcher& d);
void register_embedding_ops(Dispatcher& d);
void register_dropout_ops(Dispatcher& d);
void register_norm_ops(Dispatcher& d);
void register_vector_ops(Dispatcher& d);
void register_scan_ops(Dispatcher& d);
void register_lift_fresh(Dispatcher& d);  // ops/tensor_literal.cpp

}  // namespace strata::ops
