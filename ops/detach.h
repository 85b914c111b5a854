// ops/detach.h: the two ways to alias a tensor without autograd history, and the one place that
// decides when that dispatches aten::detach. See Note [Detach and the interposer].
#pragma once

#include "../core/dispatch/dispatcher.h"
#include "../core/tensor.h"

namespace strata {

// Note [Detach and the interposer]
// PyTorch aliases a tensor without history in two ways:
//  1. `x.detach()`, the op aten::detach. Its ADInplaceOrView kernel then wraps the result as a
//     non-differentiable view, which copies the TensorImpl once more (shallow_copy_and_detach).
//  2. Internals copy the TensorImpl directly (shallow_copy_and_detach): saving a forward *output*
//     for backward (SavedVariable), unpacking it again, and the wrapping in 1.
// A direct copy dispatches nothing, unless the interposer would see the tensor (a dispatch mode is
// active, or the tensor is a wrapper subclass): then PyTorch asks Python to detach it, which sends
// aten::detach through the Python key. That is why a mode sees `detach` after relu and
// _log_softmax in the forward (their outputs are saved), before threshold_backward and
// _log_softmax_backward_data (unpacked), and twice per AccumulateGrad in PyTorch 2.8, whose
// `new_grad.detach()` is the op plus the wrapping. PyTorch after 2.8 (PR #163671) dispatches the
// wrapping's detach no more, so AccumulateGrad shows one; strata follows 2.8 here.
// The wrapping is aten::detach's kernel at the Autograd key (PyTorch's ADInplaceOrView kernel), which
// runs for every call from the top (Note [A call from the top passes Autograd]): so a mode's or a
// subclass's own `op.call` of the detach a shallow copy sent it is wrapped again too, after the guard
// that excludes Autograd is gone, and the next mode out sees that wrapping's detach as PyTorch's does
// (two nested logging modes log 10 entries around one detach(x)). A plain call without any of this
// takes the unboxed fast path, whose fresh alias needs no wrapping (Note [The wrapping copy of a sole
// alias is the alias itself]).

// aten::detach, then the non-differentiable-view wrapping (PyTorch 2.8's ADInplaceOrView step).
Tensor detach(const Tensor& self);

// aten::detach's kernel at the Autograd key: the op below Autograd, then the wrapping. Registered
// with the view ops.
void detach_autograd_kernel(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

// PyTorch's TensorImpl::shallow_copy_and_detach: a new TensorImpl over the same data with no autograd
// state; dispatched as aten::detach at the Python key when interposer_sees(self).
Tensor shallow_copy_and_detach(const Tensor& self);

}  // namespace strata
