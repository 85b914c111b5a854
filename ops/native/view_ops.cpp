// ops/native/view_ops.cpp: ops whose output shares the input's storage: t, transpose.int, permute, view, expand,
// as_strided, detach, unsqueeze, squeeze.dim, select.int, slice.Tensor, diagonal (and select_backward, slice_backward,
// diagonal_backward, which write into such a view of a fresh tensor). Each is one geometry function (sizes, strides, offset of the view); the same
// function serves CPU and meta tensors, so no data is touched.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "core/util/checked_math.h"
#include "ops/boxing.h"
#include "ops/detach.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace detail {
// view's output: TensorImpl::make_reshaped keeps its input's numel and offset, and its contiguity when
// the input is contiguous (Note [A view's contiguity]), where make_view_of(ViewSpec) recomputes them.
// view_kernel and UnboxedView find this make_view_of through argument-dependent lookup, like the ones
// in boxing.h.
struct ReshapedGeometry {
  DimVector sizes;
  DimVector strides;
};
inline Tensor make_view_of(const Tensor& base, ReshapedGeometry&& geometry) {
  return Tensor(TensorImpl::make_reshaped(*base.impl(), geometry.sizes, geometry.strides));
}
}  // namespace detail

namespace {

using detail::ReshapedGeometry;

ViewSpec same_geometry(const Tensor& self) {
  return {DimVector(self.sizes()), DimVector(self.strides()), self.storage_offset()};
}

// ---- t, transpose.int ----
SwappedDims transpose_geometry(const Tensor& self, std::int64_t dim0, std::int64_t dim1) {
  const std::int64_t ndim = self.dim();
  const auto d0 = static_cast<std::size_t>(wrap_dim(dim0, ndim));  // 0 for a 0-d tensor
  const auto d1 = static_cast<std::size_t>(wrap_dim(dim1, ndim));
  return {d0, d1};
}

SwappedDims t_geometry(const Tensor& self) {
  STRATA_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? SwappedDims{0, 0} : SwappedDims{0, 1};
}

// ---- permute: dimension i of the view is dimension dims[i] of self (PyTorch's
// _permute_size_stride_estimation and its words) ----
ViewSpec permute_geometry(const Tensor& self, IntArrayRef dims) {
  const std::int64_t ndim = self.dim();
  STRATA_CHECK(ndim == static_cast<std::int64_t>(dims.size()),
               "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
               "ordering of dimensions i.e. input.dim() = ", ndim, " is not equal to len(dims) = ", dims.size());
  DimVector sizes(dims.size(), 0), strides(dims.size(), 0);
  SmallVector<bool, 8> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(wrap_dim(dims[i], ndim));
    STRATA_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return {std::move(sizes), std::move(strides), self.storage_offset()};
}

// ---- view ----
ReshapedGeometry view_geometry(const Tensor& self, IntArrayRef size) {
  ReshapedGeometry view{infer_size(size, self.numel()), {}};
  STRATA_CHECK(view_strides(self.sizes(), self.strides(), view.sizes, self.numel(), view.strides),
               "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
               "two contiguous subspaces). Use .reshape(...) instead.");
  return view;
}

// ---- expand ----
ViewSpec expand_geometry(const Tensor& self, IntArrayRef size, bool implicit) {
  (void)implicit;
  // PyTorch's words, with the legacy type name its Python error shows ("torch.FloatTensor" on cpu,
  // "MetaFloatType" on meta, as autograd/saved_variable.cpp's message).
  if (size.size() < static_cast<std::size_t>(self.dim())) [[unlikely]] {
    const std::string_view scalar = dtype_c10_name(self.dtype());
    STRATA_CHECK(false, "expand(", self.is_meta() ? "Meta" : "torch.", scalar, self.is_meta() ? "Type" : "Tensor", "{",
                 shape_str(self.sizes()), "}, size=", shape_str(size), "): the number of sizes provided (", size.size(),
                 ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  }
  ExpandedGeometry g = strata::expand_geometry(self.sizes(), self.strides(), size);
  return {std::move(g.sizes), std::move(g.strides), self.storage_offset()};
}

// ---- as_strided ----
ViewSpec as_strided_geometry(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                             std::optional<std::int64_t> storage_offset) {
  STRATA_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  for (std::int64_t s : stride)
    STRATA_CHECK(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ", shape_str(stride));
  check_size_nonnegative(size);
  const std::int64_t offset = storage_offset.value_or(self.storage_offset());
  STRATA_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  // Checked for meta tensors too, which have no storage to bound the view: the arithmetic must not overflow.
  const std::size_t item = element_size(self.dtype());
  const auto needed = static_cast<std::size_t>(storage_nbytes(size, stride, item, offset));
  if (self.impl()->has_data()) {
    const std::size_t available = self.impl()->storage()->nbytes();
    STRATA_CHECK(needed <= available, "setStorage: sizes ", shape_str(size), ", strides ", shape_str(stride),
                 ", storage offset ", offset, ", and itemsize ", item, " requiring a storage size of ", needed,
                 " are out of bounds for storage of size ", available);
  }
  numel_of(size);  // "numel: integer multiplication overflow" for [2^40, 2^40] with stride 0, before any view exists
  return {DimVector(size), DimVector(stride), offset};
}

// ---- unsqueeze, squeeze.dim ----
ViewSpec unsqueeze_geometry(const Tensor& self, std::int64_t dim) {
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim() + 1));
  ViewSpec spec = same_geometry(self);
  const std::int64_t stride = d >= spec.sizes.size() ? 1 : saturating_mul(spec.sizes[d], spec.strides[d]);
  DimVector sizes, strides;
  for (std::size_t i = 0; i <= spec.sizes.size(); ++i) {
    if (i == d) {
      sizes.push_back(1);
      strides.push_back(stride);
    }
    if (i < spec.sizes.size()) {
      sizes.push_back(spec.sizes[i]);
      strides.push_back(spec.strides[i]);
    }
  }
  return {sizes, strides, self.storage_offset()};
}

ViewSpec squeeze_dim_geometry(const Tensor& self, std::int64_t dim) {
  ViewSpec spec = same_geometry(self);
  if (self.dim() == 0) {
    wrap_dim(dim, 0);
    return spec;
  }
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
  if (spec.sizes[d] != 1) return spec;
  DimVector sizes, strides;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    if (i == d) continue;
    sizes.push_back(spec.sizes[i]);
    strides.push_back(spec.strides[i]);
  }
  return {sizes, strides, self.storage_offset()};
}

// ---- select.int, slice.Tensor, and their backward ops ----
// The checks and the wrapped dim and index of select on a tensor of `sizes` (PyTorch's words).
struct SelectedDim {
  std::size_t dim;
  std::int64_t index;  // in [0, size)
};
SelectedDim select_dim(IntArrayRef sizes, std::int64_t dim, std::int64_t index) {
  const auto ndim = static_cast<std::int64_t>(sizes.size());
  STRATA_CHECK(ndim > 0, "select() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, ndim));
  const std::int64_t size = sizes[d];
  STRATA_CHECK(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
               shape_str(sizes), " at dimension ", d);
  return {d, index < 0 ? index + size : index};
}

// PyTorch's slice: start and end wrap once and are then clamped to [0, size], end to at least start.
struct SlicedDim {
  std::size_t dim;
  std::int64_t start;   // in [0, size]
  std::int64_t length;  // elements kept
};
SlicedDim slice_dim(IntArrayRef sizes, std::int64_t dim, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, std::int64_t step) {
  const auto ndim = static_cast<std::int64_t>(sizes.size());
  STRATA_CHECK(ndim > 0, "slice() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, ndim));
  STRATA_CHECK(step > 0, "slice step must be positive");
  const std::int64_t size = sizes[d];
  std::int64_t from = start.value_or(0);
  std::int64_t to = end.value_or(std::numeric_limits<std::int64_t>::max());
  if (from < 0) from = from < -size ? 0 : from + size;
  if (to < 0) to = to < -size ? 0 : to + size;
  from = std::min(from, size);
  to = std::clamp(to, from, size);
  return {d, from, to == from ? 0 : 1 + (to - from - 1) / step};
}

// The sizes of a select (without `dim`) or slice of a tensor of `sizes`.
DimVector without_dim(IntArrayRef sizes, std::size_t dim) {
  DimVector out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (i != dim) out.push_back(sizes[i]);
  return out;
}
DimVector sliced_sizes(IntArrayRef sizes, SlicedDim s) {
  DimVector out(sizes);
  out[s.dim] = s.length;
  return out;
}

ViewSpec select_geometry(const Tensor& self, std::int64_t dim, std::int64_t index) {
  const SelectedDim s = select_dim(self.sizes(), dim, index);
  ViewSpec spec = same_geometry(self);
  const std::int64_t offset = spec.storage_offset + s.index * spec.strides[s.dim];  // an element of the tensor: no overflow
  return {without_dim(spec.sizes, s.dim), without_dim(spec.strides, s.dim), offset};
}

ViewSpec slice_geometry(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start,
                        std::optional<std::int64_t> end, std::int64_t step) {
  const SlicedDim s = slice_dim(self.sizes(), dim, start, end, step);
  ViewSpec spec = same_geometry(self);
  // PyTorch's offset and stride. Inside the tensor neither overflows; for an empty or one-element
  // result (start == size, or a huge step) they might, and then the one nothing reads stays as it was.
  std::int64_t offset = 0, stride = 0;
  if (!__builtin_mul_overflow(s.start, spec.strides[s.dim], &offset) &&
      !__builtin_add_overflow(spec.storage_offset, offset, &offset))
    spec.storage_offset = offset;
  if (!__builtin_mul_overflow(spec.strides[s.dim], step, &stride)) spec.strides[s.dim] = stride;
  spec.sizes[s.dim] = s.length;
  return spec;
}

// select_backward, slice_backward: zeros of the input's sizes with the gradient copied into the part
// the forward op viewed (PyTorch's zeros + select/slice + copy_). copy_ broadcasts: the gradient may
// be any shape that broadcasts to the part's, and copy_'s TensorIterator words the errors.
void check_backward_grad(const Tensor& grad_output, IntArrayRef part) {
  const DimVector shape = broadcast_shapes(part, grad_output.sizes());
  STRATA_CHECK(IntArrayRef(shape) == part, "output with shape ", shape_str(part), " doesn't match the broadcast shape ",
               shape_str(shape));
}
void zero_and_copy_into(const Tensor& out, ViewSpec&& part, const Tensor& grad_output) {
  if (out.numel() > 0) std::memset(out.raw_data(), 0, static_cast<std::size_t>(out.numel()) * element_size(out.dtype()));
  copy_elements(detail::make_view_of(out, std::move(part)), grad_output);
}

TensorSpec select_backward_meta(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t index) {
  check_size_nonnegative(input_sizes);
  check_backward_grad(grad_output, without_dim(input_sizes, select_dim(input_sizes, dim, index).dim));
  return {DimVector(input_sizes), grad_output.dtype(), {}};
}
void select_backward_cpu(const Tensor& out, const Tensor& grad_output, IntArrayRef, std::int64_t dim, std::int64_t index) {
  zero_and_copy_into(out, select_geometry(out, dim, index), grad_output);
}

TensorSpec slice_backward_meta(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t dim, std::int64_t start,
                               std::int64_t end, std::int64_t step) {
  check_size_nonnegative(input_sizes);
  check_backward_grad(grad_output, sliced_sizes(input_sizes, slice_dim(input_sizes, dim, start, end, step)));
  return {DimVector(input_sizes), grad_output.dtype(), {}};
}
void slice_backward_cpu(const Tensor& out, const Tensor& grad_output, IntArrayRef, std::int64_t dim, std::int64_t start,
                        std::int64_t end, std::int64_t step) {
  zero_and_copy_into(out, slice_geometry(out, dim, start, end, step), grad_output);
}

// ---- diagonal and its backward op ----
// PyTorch's diagonal: dim1 and dim2 are dropped and the diagonal, shifted by `offset` (above the main
// one when positive: dim2's first columns are skipped; below it when negative: dim1's first rows),
// becomes the last dimension. An offset past the end gives an empty diagonal at the input's offset.
struct DiagonalDims {
  std::size_t dim1, dim2;
  std::int64_t length;
  DimVector sizes;  // the diagonal's
};
DiagonalDims diagonal_dims(IntArrayRef sizes, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  const auto ndim = static_cast<std::int64_t>(sizes.size());
  const auto d1 = static_cast<std::size_t>(wrap_dim(dim1, ndim));
  const auto d2 = static_cast<std::size_t>(wrap_dim(dim2, ndim));
  STRATA_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const std::int64_t size1 = sizes[d1], size2 = sizes[d2];
  // Each branch compares with a size first, so the offset is never negated or added out of range.
  const std::int64_t length = offset >= 0 ? (offset >= size2 ? 0 : std::min(size1, size2 - offset))
                                          : (offset <= -size1 ? 0 : std::min(size1 + offset, size2));
  DimVector out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (i != d1 && i != d2) out.push_back(sizes[i]);
  out.push_back(length);
  return {d1, d2, length, out};
}

ViewSpec diagonal_geometry(const Tensor& self, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  DiagonalDims d = diagonal_dims(self.sizes(), offset, dim1, dim2);
  const IntArrayRef in_strides = self.strides();
  const std::int64_t stride1 = in_strides[d.dim1], stride2 = in_strides[d.dim2];
  // The first element's offset: inside a tensor with elements it cannot overflow; an empty tensor's
  // strides may be anything, and then an offset that would overflow is left as it was (as slice's).
  std::int64_t offset_out = self.storage_offset(), shift = 0;
  if (d.length > 0 && !__builtin_mul_overflow(offset >= 0 ? offset : -offset, offset >= 0 ? stride2 : stride1, &shift) &&
      !__builtin_add_overflow(offset_out, shift, &shift))
    offset_out = shift;
  DimVector strides;
  for (std::size_t i = 0; i < in_strides.size(); ++i)
    if (i != d.dim1 && i != d.dim2) strides.push_back(in_strides[i]);
  std::int64_t stride = 0;
  if (__builtin_add_overflow(stride1, stride2, &stride)) stride = std::numeric_limits<std::int64_t>::max();
  strides.push_back(stride);
  return {std::move(d.sizes), strides, offset_out};
}

// PyTorch's diagonal_backward: zeros of input_sizes, the gradient copied into their diagonal.
TensorSpec diagonal_backward_meta(const Tensor& grad_output, IntArrayRef input_sizes, std::int64_t offset, std::int64_t dim1,
                                  std::int64_t dim2) {
  check_size_nonnegative(input_sizes);
  check_backward_grad(grad_output, diagonal_dims(input_sizes, offset, dim1, dim2).sizes);
  return {DimVector(input_sizes), grad_output.dtype(), {}};
}
void diagonal_backward_cpu(const Tensor& out, const Tensor& grad_output, IntArrayRef, std::int64_t offset, std::int64_t dim1,
                           std::int64_t dim2) {
  zero_and_copy_into(out, diagonal_geometry(out, offset, dim1, dim2), grad_output);
}

// ---- detach: same geometry, no autograd history (see ops/detach.h) ----
SameGeometry detach_geometry(const Tensor&) { return {}; }

}  // namespace

// register_view_ops(): the rows of view_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/view_ops_rows.inc"

}  // namespace strata::ops
