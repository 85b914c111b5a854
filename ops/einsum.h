// ops/einsum.h: torch.einsum, the Einstein summation of PyTorch's function layer
// (torch.functional.einsum), decomposed into dispatched ops as ATen's einsum does.
#pragma once

#include <string_view>

#include "../core/tensor.h"

namespace strata {

// The sum of products the equation describes, as torch.einsum("bij,bjk->bik", a, b): a subscript
// (a letter) per dimension of each operand, "..." for any dimensions not named (broadcast across
// operands), an optional "->" and the output's subscripts (without it: "..." then every subscript
// seen once, in alphabetical order, capitals first). A subscript repeated in one operand takes its
// diagonal; one missing from the output is summed over. Operands are contracted left to right, each
// pair by one bmm (Note [einsum runs ATen's decomposition], ops/einsum.cpp); errors are PyTorch's.
Tensor einsum(std::string_view equation, TensorList operands);

}  // namespace strata
