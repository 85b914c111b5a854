// distributed/reduce_op.h: the reductions collectives apply (upstream's reduce_op strings), in a
// header of their own so that light headers (placement.h) can name them without tensors.
#pragma once

#include <string_view>

namespace strata::distributed {

// Upstream's reduce_op strings: "sum", "avg", "product", "min", "max".
enum class ReduceOp { Sum, Avg, Product, Min, Max };
ReduceOp parse_reduce_op(std::string_view name);  // throws strata::Error for any other name
std::string_view reduce_op_name(ReduceOp op);

}  // namespace strata::distributed
