// core/shape.cpp: shape arithmetic shared by tensors and ops.
#include "core/shape.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace strata {

std::int64_t numel_of(IntArrayRef sizes) {
  std::int64_t n = 1;
  STRATA_CHECK(!multiply_overflows(sizes, &n), "numel: integer multiplication overflow");
  return n;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size(), 1);
  std::int64_t running = 1;
  bool overflow = false;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    if (i > 0) overflow |= mul_overflows(running, std::max<std::int64_t>(sizes[i], 1), &running);
  }
  STRATA_CHECK(!overflow, "Stride calculation overflowed");
  return strides;
}

// Note [An empty view's strides wrap]
// PyTorch's computeStride gives a view without elements the contiguous strides of its new shape,
// multiplied without an overflow check: zeros({0}).view({0, 2^40, 2^40}) has strides (2^80 mod 2^64
// = 0, 2^40, 1), and [0, 2^62, 3] a negative first stride. The view is made where a tensor of that
// shape with storage is not (empty() refuses it, "Stride calculation overflowed", as PyTorch 2.8's
// empty_tensor_restride does, and so does an op whose output would be contiguous): no element is
// ever addressed through such strides, and the copies that keep them (clone, empty_like: a dense
// tensor's preserve_format) are made the same way. strata wraps as PyTorch does, in unsigned
// arithmetic, where the wrap is defined.
namespace {
DimVector wrapped_contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size(), 1);
  std::uint64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = static_cast<std::int64_t>(running);
    running *= static_cast<std::uint64_t>(std::max<std::int64_t>(sizes[i], 1));
  }
  return strides;
}
}  // namespace

void check_size_nonnegative(IntArrayRef sizes) {
  for (const std::int64_t s : sizes)
    STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
}

// Note [Storage size arithmetic is unsigned]
// As in PyTorch's computeStorageNbytes, sizes and strides are reinterpreted as uint64: a negative
// stride or size becomes huge and reports overflow instead of quietly shrinking the result, and the
// total must also fit int64 (PyTorch's storage_max()).
std::int64_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize, std::int64_t storage_offset) {
  STRATA_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  std::uint64_t elements = 0;  // becomes one past the largest element offset reachable
  bool overflow = add_overflows(static_cast<std::uint64_t>(storage_offset), std::uint64_t{1}, &elements);
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    std::uint64_t span = 0;
    overflow |= mul_overflows(static_cast<std::uint64_t>(strides[d]), static_cast<std::uint64_t>(sizes[d] - 1), &span);
    overflow |= add_overflows(elements, span, &elements);
  }
  std::uint64_t bytes = 0;
  overflow |= mul_overflows(elements, std::uint64_t{itemsize}, &bytes);
  overflow |= bytes > static_cast<std::uint64_t>(INT64_MAX);
  STRATA_CHECK(!overflow, "Storage size calculation overflowed with sizes=", shape_str(sizes),
               " and strides=", shape_str(strides));
  return static_cast<std::int64_t>(bytes);
}

void throw_bad_contiguous_sizes(IntArrayRef sizes) {
  for (const std::int64_t s : sizes)
    STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  detail::throw_error(detail::str_cat("Storage size calculation overflowed with sizes=", shape_str(sizes)));
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    // Off the row-major layout (or past int64, which only a tensor without elements reaches:
    // [0, 2^40, 2^40]). A tensor without elements is contiguous whatever its strides, as PyTorch's
    // compute_contiguous says.
    if (sizes[i] == 0 || strides[i] != expected || mul_overflows(expected, sizes[i], &expected))
      return std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  }
  return true;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  if (is_contiguous_layout(sizes, strides)) return true;
  SmallVector<std::size_t, 5> order;
  for (std::size_t i = 0; i < sizes.size(); ++i) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  std::int64_t expected = 1;
  for (std::size_t i : order) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    if (mul_overflows(expected, sizes[i], &expected)) return false;  // no valid tensor gets here
  }
  return true;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  if (a == b) return DimVector(a);
  const std::size_t ndim = std::max(a.size(), b.size());
  DimVector out(ndim, 1);
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::ptrdiff_t ia = static_cast<std::ptrdiff_t>(a.size()) - 1 - static_cast<std::ptrdiff_t>(i);
    const std::ptrdiff_t ib = static_cast<std::ptrdiff_t>(b.size()) - 1 - static_cast<std::ptrdiff_t>(i);
    const std::int64_t sa = ia >= 0 ? a[static_cast<std::size_t>(ia)] : 1;
    const std::int64_t sb = ib >= 0 ? b[static_cast<std::size_t>(ib)] : 1;
    STRATA_CHECK(sa == sb || sa == 1 || sb == 1, "The size of tensor a (", sa,
                 ") must match the size of tensor b (", sb, ") at non-singleton dimension ", ndim - 1 - i);
    out[ndim - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  const std::size_t lead = desired.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && shape[i] != desired[lead + i]) return false;
  return true;
}

ExpandedGeometry expand_geometry(IntArrayRef sizes, IntArrayRef strides, IntArrayRef target) {
  const std::size_t ndim = target.size();
  const std::size_t tensor_dim = sizes.size();
  STRATA_CHECK(ndim >= tensor_dim, "expand(tensor of shape ", shape_str(sizes), ", size=", shape_str(target),
               "): the number of sizes provided (", ndim,
               ") must be greater or equal to the number of dimensions in the tensor (", tensor_dim, ")");
  ExpandedGeometry out{DimVector(ndim, 0), DimVector(ndim, 0)};
  for (std::size_t i = ndim; i-- > 0;) {
    const std::ptrdiff_t dim = static_cast<std::ptrdiff_t>(tensor_dim) - static_cast<std::ptrdiff_t>(ndim - i);
    std::int64_t size = dim >= 0 ? sizes[static_cast<std::size_t>(dim)] : 1;
    std::int64_t stride = dim >= 0 ? strides[static_cast<std::size_t>(dim)]
                                   : (i + 1 < ndim ? saturating_mul(out.sizes[i + 1], out.strides[i + 1]) : 1);
    std::int64_t wanted = target[i];
    // PyTorch checks only -1 here and lets other negative sizes make a tensor with a negative size
    // (pytorch/pytorch#76362); strata rejects them, in the same words.
    if (dim < 0) {
      STRATA_CHECK(wanted >= 0, "The expanded size of the tensor (", wanted,
                   ") isn't allowed in a leading, non-existing dimension ", i);
    } else {
      STRATA_CHECK(wanted >= -1, "The expanded size of the tensor (", wanted, ") isn't allowed at dimension ", i,
                   ": sizes must be non-negative, or -1 to keep the existing size (", size, ")");
    }
    if (wanted == -1) wanted = size;
    if (size != wanted) {
      STRATA_CHECK(size == 1, "The expanded size of the tensor (", wanted, ") must match the existing size (", size,
                   ") at non-singleton dimension ", i, ".  Target sizes: ", shape_str(target),
                   ".  Tensor sizes: ", shape_str(sizes));
      size = wanted;
      stride = 0;
    }
    out.sizes[i] = size;
    out.strides[i] = stride;
  }
  return out;
}

DimVector infer_size(IntArrayRef shape, std::int64_t numel) {
  DimVector out(shape);
  std::int64_t known = 1;
  bool overflow = false;
  std::optional<std::size_t> inferred;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      STRATA_CHECK(!inferred, "only one dimension can be inferred");
      inferred = d;
    } else {
      STRATA_CHECK(shape[d] >= 0, "invalid shape dimension ", shape[d]);
      overflow |= mul_overflows(known, shape[d], &known);
    }
  }
  // An overflowing product (Note [Size products overflow stickily]) cannot match any numel.
  if (overflow) detail::throw_error(detail::str_cat("shape '", shape_str(shape), "' is invalid for input of size ", numel));
  if (inferred) {
    STRATA_CHECK(known != 0, "cannot reshape tensor of ", numel, " elements into shape ", shape_str(shape),
                 " because the unspecified dimension size -1 can be any value and is ambiguous");
    if (numel % known == 0) {
      out[*inferred] = numel / known;
      return out;
    }
  } else if (known == numel) {
    return out;
  }
  detail::throw_error(detail::str_cat("shape '", shape_str(shape), "' is invalid for input of size ", numel));
}

std::optional<DimVector> view_strides(IntArrayRef old_shape, IntArrayRef old_stride, IntArrayRef new_shape) {
  DimVector new_stride;
  if (!view_strides(old_shape, old_stride, new_shape, old_shape.empty() ? 1 : numel_of(old_shape), new_stride))
    return std::nullopt;
  return new_stride;
}

bool view_strides(IntArrayRef old_shape, IntArrayRef old_stride, IntArrayRef new_shape, std::int64_t numel,
                  DimVector& new_stride) {
  if (old_shape.empty()) {
    new_stride = DimVector(new_shape.size(), 1);
    return true;
  }
  if (numel == 0) {
    if (std::equal(old_shape.begin(), old_shape.end(), new_shape.begin(), new_shape.end())) new_stride = DimVector(old_stride);
    else new_stride = wrapped_contiguous_strides(new_shape);
    return true;
  }
  // Not zeroed: the walk below writes every entry before it returns them (view_d reaches -1).
  new_stride.resize_for_overwrite(new_shape.size());
  std::int64_t view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = old_stride.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::int64_t tensor_d = static_cast<std::int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    const auto td = static_cast<std::size_t>(tensor_d);
    tensor_numel *= old_shape[td];
    // At the end of a chunk of dimensions that is contiguous in memory, fit view dimensions into it.
    if (tensor_d == 0 || (old_shape[td - 1] != 1 && old_stride[td - 1] != saturating_mul(tensor_numel, chunk_base_stride))) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[static_cast<std::size_t>(view_d)] == 1)) {
        new_stride[static_cast<std::size_t>(view_d)] = saturating_mul(view_numel, chunk_base_stride);
        view_numel *= new_shape[static_cast<std::size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old_stride[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim) {
  const std::int64_t rank = std::max<std::int64_t>(ndim, 1);  // a 0-d tensor accepts dims -1 and 0
  STRATA_CHECK(dim >= -rank && dim < rank, "Dimension out of range (expected to be in range of [", -rank,
               ", ", rank - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + rank : dim;
}

std::ostream& operator<<(std::ostream& out, IntArrayRef sizes) { return out << shape_str(sizes); }

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << ']';
  return out.str();
}

std::string shape_x(IntArrayRef sizes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? "x" : "") << sizes[i];
  return out.str();
}

}  // namespace strata
