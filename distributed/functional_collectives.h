// distributed/functional_collectives.h: PyTorch's functional collectives
// (torch.ops._c10d_functional.*): each is a dispatched op with upstream's schema, so modes, wrapper
// subclasses, OpCounter and DebugMode see it like any other op. A collective returns its output at
// once and completes asynchronously: wait_tensor(output) is where the result is ready (upstream's
// AsyncCollectiveTensor waits on first use; here the caller waits). One nobody waits for still
// completes once every rank issued it (process_group.h).
#pragma once

#include <string_view>

#include "../core/util/array_ref.h"
#include "../core/tensor.h"

namespace strata::distributed {

// _c10d_functional::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor
Tensor all_reduce(const Tensor& input, std::string_view reduce_op, std::string_view group_name);
// _c10d_functional::all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!): the
// reduction written into `input` itself (contiguous), complete at wait_tensor(input).
const Tensor& all_reduce_(const Tensor& input, std::string_view reduce_op, std::string_view group_name);
// _c10d_functional::all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor
Tensor all_gather_into_tensor(const Tensor& input, std::int64_t group_size, std::string_view group_name);
// _c10d_functional::reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor
Tensor reduce_scatter_tensor(const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                             std::string_view group_name);
// _c10d_functional::all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes,
// str group_name) -> Tensor
Tensor all_to_all_single(const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                         std::string_view group_name);
// _c10d_functional::broadcast(Tensor input, int src, str group_name) -> Tensor
Tensor broadcast(const Tensor& input, std::int64_t src, std::string_view group_name);
// _c10d_functional::wait_tensor(Tensor tensor) -> Tensor: waits for the collective that made
// `tensor` (nothing to wait for: returns at once) and returns `tensor` itself.
Tensor wait_tensor(const Tensor& tensor);

// Registers the _c10d_functional ops, once. The functions above do it on first use, and spawn before
// it starts any rank: registering changes the op table, which no other thread may be reading.
void register_collective_ops();

}  // namespace strata::distributed
