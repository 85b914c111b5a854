// core/tensor_format.h: printing tensors exactly as PyTorch's repr does (torch/_tensor_str.py):
// precision 4, int mode for integral floats, scientific mode for wide ranges, 80-column wrapping,
// summarised with "..." above 1000 elements, and the dtype / device / grad suffixes.
#pragma once

#include <string>
#include <string_view>

#include "core/tensor.h"

namespace strata {

std::string format_tensor(const Tensor& t);

namespace detail {
// autograd/ installs the function that names a grad_fn (core cannot see Node's definition).
using NodeNameFn = std::string_view (*)(const autograd::Node&);
void set_node_name_fn(NodeNameFn fn);
}  // namespace detail

}  // namespace strata
