// core/interpose/subclass.h: non-wrapper tensor subclasses, PyTorch's torch.Tensor._make_subclass. Unlike a
// wrapper (make_wrapper_tensor), such a tensor has real data: it is an alias of a plain tensor that
// carries the Python key and a TensorSubclass payload, so ops on it reach the subclass's handler
// (core/interpose/interposer.h), which may run them on the tensor itself below the Python key.
#pragma once

#include "interposer.h"

namespace strata {

// Note [Non-wrapper subclasses]
// A wrapper subclass has no storage, so everything it means lives in its handler. A non-wrapper
// subclass (PyTorch's _make_subclass) is an alias of real data that also carries the Python key and a
// payload: the interposer sends its ops to the payload's handler exactly as for a wrapper (a mode
// first, then the first subclass argument), and the handler may run them on the tensor itself with
// the Python key excluded; the CPU kernels accept it because it has storage, and data access works
// (Tensor::check_data_access refuses only a subclass tensor without data). The Python key keeps it
// off the unboxed fast path, so no op on it skips the handler.

// A new tensor over `data`'s storage and geometry (sharing its data and version counter, without its
// autograd state) whose ops go to `subclass`. `data` must be a defined plain tensor (not itself a
// subclass). Use autograd's requires_grad_() to make the result require grad.
Tensor make_subclass(IntrusivePtr<TensorSubclass> subclass, const Tensor& data);

// Dispatches `op` on `stack` with the Python key excluded: what a non-wrapper subclass's handler
// calls to reach the kernels with its own tensors (PyTorch's `with no_dispatch(): func(*args)`).
// Results are plain tensors (views of the subclass tensor keep the Python key but no payload, Note
// [A view keeps its source's keys]); the handler rewraps what it wants with make_subclass.
void call_below_python(const OperatorHandle& op, Stack& stack);

}  // namespace strata
