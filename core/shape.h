// core/shape.h: sizes, strides and the shape arithmetic every op shares: contiguous strides,
// broadcasting, dimension wrapping and PyTorch-style shape text ("[8, 16]" and "8x16").
#pragma once

#include <iosfwd>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "util/array_ref.h"
#include "util/checked_math.h"
#include "util/small_vector.h"

namespace strata {

// Sizes and strides of up to 5 dimensions live inline; more spill to the heap.
using DimVector = SmallVector<std::int64_t, 5>;
using IntArrayRef = ArrayRef<std::int64_t>;

// Both throw PyTorch's errors when a product overflows int64 ("numel: integer multiplication overflow",
// "Stride calculation overflowed"); see core/util/checked_math.h.
std::int64_t numel_of(IntArrayRef sizes);
DimVector contiguous_strides(IntArrayRef sizes);

// PyTorch's check_size_nonnegative: "Trying to create tensor with negative dimension -1: [-1, 3]".
void check_size_nonnegative(IntArrayRef sizes);
// PyTorch's computeStorageNbytes: the bytes from the storage's start to one past the farthest element
// a tensor of this geometry reaches, 0 when it has no elements. Throws "Storage size calculation
// overflowed with sizes=[..] and strides=[..]" when that does not fit int64.
std::int64_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize,
                            std::int64_t storage_offset = 0);
// The numel of a fresh contiguous tensor of `sizes`, in one pass: PyTorch's check_size_nonnegative,
// then its computeStorageNbytesContiguous error unless numel * itemsize fits int64. Inline, as every
// fresh tensor asks; the errors are built out of line.
[[noreturn]] void throw_bad_contiguous_sizes(IntArrayRef sizes);
// Whether `numel` elements of `itemsize` bytes take more than int64 can count.
inline bool contiguous_bytes_overflow(std::uint64_t numel, std::size_t itemsize) {
  std::uint64_t bytes = 0;
  return mul_overflows(numel, std::uint64_t{itemsize}, &bytes) || bytes > std::uint64_t{INT64_MAX};
}
inline std::int64_t checked_contiguous_numel(IntArrayRef sizes, std::size_t itemsize) {
  std::uint64_t numel = 1;
  bool bad = false;
  for (const std::int64_t s : sizes) bad |= (s < 0) | mul_overflows(numel, static_cast<std::uint64_t>(s), &numel);
  bad |= contiguous_bytes_overflow(numel, itemsize);
  if (bad) [[unlikely]] throw_bad_contiguous_sizes(sizes);
  return static_cast<std::int64_t>(numel);
}
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);
// True when the elements occupy exactly numel() consecutive slots, in any dimension order.
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

// Broadcast two shapes as PyTorch does; the error names both sizes at the first conflicting dimension.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
// Whether `shape` broadcasts to `desired` (each trailing size equal or 1): PyTorch's is_expandable_to.
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);

// PyTorch's inferExpandGeometry: sizes and strides of a tensor (sizes, strides) expanded to `target`,
// where -1 keeps a size and new leading dimensions get stride 0. Throws PyTorch's expand errors.
struct ExpandedGeometry {
  DimVector sizes;
  DimVector strides;
};
ExpandedGeometry expand_geometry(IntArrayRef sizes, IntArrayRef strides, IntArrayRef target);

// PyTorch's infer_size: `shape` with one -1 resolved so it has `numel` elements; its errors otherwise.
DimVector infer_size(IntArrayRef shape, std::int64_t numel);
// PyTorch's computeStride: strides that let `new_shape` view memory laid out as (old_shape, old_stride),
// or nullopt when a new dimension would span two non-contiguous chunks (then only a copy can reshape).
std::optional<DimVector> view_strides(IntArrayRef old_shape, IntArrayRef old_stride, IntArrayRef new_shape);
// The same written to `new_stride` (false for nullopt), given the old tensor's numel: view's form,
// which has both at hand and saves recounting the numel and moving the strides out of an optional.
bool view_strides(IntArrayRef old_shape, IntArrayRef old_stride, IntArrayRef new_shape, std::int64_t numel,
                  DimVector& new_stride);

// Wraps a possibly negative dimension into [0, ndim); PyTorch's "Dimension out of range" error otherwise.
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim);

std::string shape_str(IntArrayRef sizes);  // "[8, 16]"
// LibTorch's `std::cout << t.sizes()`: "[8, 16]" (a DimVector converts).
std::ostream& operator<<(std::ostream& out, IntArrayRef sizes);
std::string shape_x(IntArrayRef sizes);    // "8x16", as in matmul errors

}  // namespace strata
