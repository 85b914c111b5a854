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
// check_wrapper_geometry, keeps what it returned, and then wraps with make_checked_wrapper_tensor,
// which skips the checks and takes the element count and contiguity from it instead of computing
// them again. The invariant, the caller's to keep: `checked` is what check_wrapper_geometry(sizes,
// strides, itemsize) returned for exactly these sizes and strides, storage offset 0, and an element
// size `itemsize` no smaller than dtype's (the storage size only grows with it). A geometry that
// fails throws the error make_wrapper_tensor would.
struct CheckedGeometry {
  std::size_t itemsize = 0;  // the element size it passed for; 0: not checked
  std::int64_t numel = 0;
  bool contiguous = false;
};
CheckedGeometry check_wrapper_geometry(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize);
Tensor make_checked_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                                   const CheckedGeometry& checked, ScalarType dtype, Device device);

}  // namespace strata
