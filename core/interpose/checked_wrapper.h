// core/interpose/checked_wrapper.h: a wrapper tensor whose geometry its caller has already checked,
// for handlers that wrap every result in one of a few cached shapes (DTensor's sharding cache).
#pragma once

#include <cstddef>

#include "interposer.h"

namespace strata {

// Note [A wrapper of checked geometry]
// make_wrapper_tensor checks its geometry on every call (sizes and strides of one length, no
// negative size, a storage size that does not overflow for the dtype's element size), as PyTorch's
// _make_wrapper_subclass does. A handler that wraps each result in a shape it keeps (the DTensor
// handler: the sharding cache's output specs, immutable and shared) checks that shape once with
// check_wrapper_geometry, remembers the element size it passed for, and then wraps with
// make_checked_wrapper_tensor, which skips the checks. The invariant, the caller's to keep:
// check_wrapper_geometry(sizes, strides, element_size(dtype)) returned for exactly these sizes and
// strides, storage offset 0, and an element size no smaller than dtype's (the storage size only
// grows with it). A geometry that fails throws the error make_wrapper_tensor would.
void check_wrapper_geometry(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize);
Tensor make_checked_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                                   ScalarType dtype, Device device);

}  // namespace strata
