// core/tensor_format.h: printing tensors exactly as PyTorch's repr does (torch/_tensor_str.py):
// precision 4, int mode for integral floats, scientific mode for wide ranges, 80-column wrapping,
// summarised with "..." above 1000 elements, and the dtype / device / grad suffixes.
#pragma once

#include <string>

#include "tensor.h"

namespace strata {

std::string format_tensor(const Tensor& t);

}  // namespace strata
