// autograd/formulas/as_strided_backward.cpp: the gradient of as_strided (PyTorch's as_strided_backward in
// FunctionsManual.cpp), which is also the gradient of a regenerated view (AsStridedBackward0,
// Note [Views share their base's history]). Overlapping geometries are refused, not approximated.
#include <algorithm>
#include <numeric>

#include "autograd/formulas/functions_manual.h"

namespace strata::autograd {

namespace {

// Whether some two elements of a geometry (without size-0 or size-1 dimensions) may share a memory
// location: visiting dimensions by increasing stride, each stride must exceed the furthest offset the
// smaller ones reach. False means certainly not; true means maybe (PyTorch's _maybe_overlapping_memory).
bool maybe_overlapping(IntArrayRef sizes, IntArrayRef strides) {
  SmallVector<std::size_t, 5> order(sizes.size(), 0);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return strides[a] < strides[b]; });
  std::int64_t reach = 0;
  for (std::size_t i : order) {
    if (strides[i] <= reach) return true;
    reach += strides[i] * (sizes[i] - 1);
  }
  return false;
}

// Elements a storage needs for a geometry (without size-0 dimensions) starting at `offset`.
std::int64_t min_storage_size(IntArrayRef sizes, IntArrayRef strides, std::int64_t offset) {
  std::int64_t size = offset + 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) size += (sizes[i] - 1) * strides[i];
  return size;
}

// zeros(sizes) in grad's dtype and device: PyTorch's at::zeros_symint(sizes, grad.options()), which a
// mode sees as aten::zeros.
Tensor zeros_shaped(const Tensor& grad, IntArrayRef sizes) {
  return zeros(sizes, {.dtype = grad.dtype(), .device = grad.device()});
}

// PyTorch's grad.new_zeros({size}); strata has no new_zeros op, so a mode sees new_empty_strided and
// zero_ where PyTorch 2.8's sees aten::new_zeros.
Tensor new_zeros_1d(const Tensor& grad, std::int64_t size) {
  const IntArrayRef sizes(&size, 1);
  Tensor out = new_empty_strided(grad, sizes, contiguous_strides(sizes));
  zero_(out);
  return out;
}

}  // namespace

// grad has the view's `sizes`; the input had `input_sizes`, `input_strides` and `input_offset`. The
// algorithm, PyTorch's: make a zero "storage" covering both geometries, scatter grad into it through
// the view's geometry, and read it back through the input's.
Tensor as_strided_backward(Tensor grad, IntArrayRef input_sizes, IntArrayRef input_strides, std::int64_t input_offset,
                           IntArrayRef sizes, IntArrayRef strides, std::optional<std::int64_t> storage_offset) {
  const std::int64_t offset = storage_offset.value_or(input_offset);
  // The view's geometry: a size-0 dimension means no gradient at all, a size-1 one is squeezed out,
  // an expanded one (stride 0) is summed over; the rest address memory.
  DimVector out_sizes, out_strides;
  for (std::size_t i = sizes.size(); i-- > 0;) {  // last first, so squeezing keeps the indices ahead valid
    const auto d = static_cast<std::int64_t>(i);
    if (sizes[i] == 0) return zeros_shaped(grad, input_sizes);
    if (sizes[i] == 1) grad = squeeze(grad, d);
    else if (strides[i] == 0) grad = sum(grad, IntArrayRef(&d, 1), false);
    else {
      out_sizes.push_back(sizes[i]);
      out_strides.push_back(strides[i]);
    }
  }
  std::reverse(out_sizes.begin(), out_sizes.end());  // collected last dimension first
  std::reverse(out_strides.begin(), out_strides.end());
  DimVector in_sizes, in_strides;  // the input's, without size-1 dimensions
  for (std::size_t i = 0; i < input_sizes.size(); ++i) {
    if (input_sizes[i] == 0) return zeros_shaped(grad, input_sizes);
    if (input_sizes[i] != 1) {
      in_sizes.push_back(input_sizes[i]);
      in_strides.push_back(input_strides[i]);
    }
  }
  // PyTorch scatters an overlapping view with index_add_ and divides by each location's count in an
  // overlapping input; strata has neither op, so it refuses rather than give a wrong gradient.
  STRATA_CHECK(!maybe_overlapping(out_sizes, out_strides) && !maybe_overlapping(in_sizes, in_strides),
               "[as_strided_backward] the derivative of as_strided is not implemented for geometries whose elements may "
               "overlap in memory (input sizes ", shape_str(input_sizes), ", strides ", shape_str(input_strides),
               "; output sizes ", shape_str(sizes), ", strides ", shape_str(strides), ")");

  const std::int64_t shared_offset = std::min(input_offset, offset);
  const std::int64_t in_offset = input_offset - shared_offset;
  const std::int64_t out_offset = offset - shared_offset;
  const std::int64_t base_size =
      std::max(min_storage_size(in_sizes, in_strides, in_offset), min_storage_size(out_sizes, out_strides, out_offset));
  const Tensor storage = new_zeros_1d(grad, base_size);
  copy_(as_strided(storage, out_sizes, out_strides, out_offset), grad);
  return as_strided(storage, input_sizes, input_strides, in_offset);
}

}  // namespace strata::autograd
