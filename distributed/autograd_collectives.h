// distributed/autograd_collectives.h: the differentiable collectives (upstream's
// _c10d_functional_autograd, torch.distributed._functional_collectives' *_autograd functions). Each
// is a custom autograd function around the functional collective: all_gather's backward is a
// reduce_scatter of the gradient (sum), reduce_scatter's an all_gather, all_to_all_single's the
// exchange with the splits swapped; a backward waits for its collective. The forward's output is
// not waited for, as upstream's: call wait_tensor (which keeps its history) before using it.
#pragma once

#include <string_view>

#include "../core/util/array_ref.h"
#include "../core/tensor.h"

namespace strata::distributed {

Tensor all_gather_tensor_autograd(const Tensor& input, std::int64_t group_size, std::string_view group_name);
Tensor reduce_scatter_tensor_autograd(const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                                      std::string_view group_name);
Tensor all_to_all_single_autograd(const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                                  std::string_view group_name);

}  // namespace strata::distributed
