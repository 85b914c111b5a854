// ops/factory_ops.cpp: making, converting and filling tensors: empty.memory_format, empty_like,
// ones_like, zeros_like, new_empty_strided, clone, _to_copy, fill_.Scalar, zero_, copy_. The *_like ops and clone follow
// PyTorch's preserve_format: a dense input's strides are kept (so a transposed tensor stays
// transposed), anything else becomes contiguous.
#include <optional>

#include "ops/boxing.h"
#include "ops/elementwise.h"
#include "ops/memory_overlap.h"
#include "ops/op_table.h"
#include "ops/output_layout.h"

namespace strata::ops {

namespace {

// The strides a preserve_format copy of `self` gets (empty: contiguous): its own when it is dense,
// else dense ones in its dimension order (PyTorch's infer_dense_strides).
DimVector preserved_strides(const Tensor& self, std::optional<MemoryFormat> format) {
  if (format.value_or(MemoryFormat::Preserve) != MemoryFormat::Preserve || self.is_contiguous()) return {};
  if (self.is_non_overlapping_and_dense()) return DimVector(self.strides());
  return output_strides(self.sizes(), {&self});
}

void check_same_device(const Tensor& self, std::optional<Device> device) {
  STRATA_CHECK(!device || *device == self.device(), "creating a ", *device, " tensor like a ", self.device(),
               " tensor is not supported; create it with empty(..., device=", *device, ") instead");
}

template <typename T>
void fill_with(const Tensor& t, T value) {
  T* p = data_of<T>(t);
  if (t.is_contiguous()) {
    std::fill(p, p + t.numel(), value);
    return;
  }
  StridedLoop<1> loop(t.sizes(), {DimVector(t.strides())});
  loop.for_each([&](const std::array<std::int64_t, 1>& off) { p[off[0]] = value; });
}

void fill_scalar(const Tensor& t, const Scalar& value) {
  visit_dtype(t.dtype(), [&](auto zero) { fill_with(t, value.to<decltype(zero)>()); });
}

// ---- empty.memory_format ----
TensorSpec empty_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                      std::optional<bool>, std::optional<MemoryFormat>) {
  for (std::int64_t s : size) STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(size));
  return {DimVector(size), dtype.value_or(ScalarType::Float32), {}};
}
void empty_cpu(const Tensor&, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
               std::optional<bool>, std::optional<MemoryFormat>) {}

// ---- empty_like, ones_like, zeros_like ----
TensorSpec like_meta(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout>,
                     std::optional<Device> device, std::optional<bool>, std::optional<MemoryFormat> format) {
  check_same_device(self, device);
  return {{}, dtype.value_or(self.dtype()), preserved_strides(self, format), &self};
}
void empty_like_cpu(const Tensor&, const Tensor&, std::optional<ScalarType>, std::optional<Layout>,
                    std::optional<Device>, std::optional<bool>, std::optional<MemoryFormat>) {}
void ones_like_cpu(const Tensor& out, const Tensor&, std::optional<ScalarType>, std::optional<Layout>,
                   std::optional<Device>, std::optional<bool>, std::optional<MemoryFormat>) {
  fill_scalar(out, Scalar(1));
}
void zeros_like_cpu(const Tensor& out, const Tensor&, std::optional<ScalarType>, std::optional<Layout>,
                    std::optional<Device>, std::optional<bool>, std::optional<MemoryFormat>) {
  fill_scalar(out, Scalar(0));
}

// ---- new_empty_strided ----
TensorSpec new_empty_strided_meta(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                  std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device> device,
                                  std::optional<bool>) {
  check_same_device(self, device);
  STRATA_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  for (std::int64_t s : stride) STRATA_CHECK(s >= 0, "Negative strides are not supported, got strides: ", shape_str(stride));
  for (std::int64_t s : size) STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(size));
  return {DimVector(size), dtype.value_or(self.dtype()), DimVector(stride)};
}
void new_empty_strided_cpu(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, std::optional<ScalarType>,
                           std::optional<Layout>, std::optional<Device>, std::optional<bool>) {}

// ---- clone ----
TensorSpec clone_meta(const Tensor& self, std::optional<MemoryFormat> format) {
  return {{}, self.dtype(), preserved_strides(self, format), &self};
}
void clone_cpu(const Tensor& out, const Tensor& self, std::optional<MemoryFormat>) { copy_elements(out, self); }

// ---- _to_copy: a copy with another dtype (what Tensor.to(dtype) dispatches) ----
TensorSpec to_copy_meta(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout>,
                        std::optional<Device> device, std::optional<bool>, bool non_blocking,
                        std::optional<MemoryFormat> format) {
  (void)non_blocking;
  check_same_device(self, device);
  return {{}, dtype.value_or(self.dtype()), preserved_strides(self, format), &self};
}
void to_copy_cpu(const Tensor& out, const Tensor& self, std::optional<ScalarType>, std::optional<Layout>,
                 std::optional<Device>, std::optional<bool>, bool, std::optional<MemoryFormat>) {
  copy_elements(out, self);
}

// ---- fill_.Scalar ----
// Any number in range converts, as in PyTorch (1.5 fills an int64 tensor with 1). One that does not
// (inf, NaN, 1e30 into int64) throws from Scalar::to before anything is written (Note [Scalar to
// integer conversion is checked]); as in PyTorch, meta tensors have no values and are not checked.
void fill__check(const Tensor&, Scalar) {}
void fill__cpu(const Tensor& self, Scalar value) { fill_scalar(self, value); }

// ---- zero_ ----
void zero__check(const Tensor&) {}
void zero__cpu(const Tensor& self) { fill_scalar(self, Scalar(0)); }

// ---- copy_: src broadcast into self, converting dtype ----
void copy__check(const Tensor& self, const Tensor& src, bool non_blocking) {
  (void)non_blocking;
  STRATA_CHECK(src.defined(), "copy_ from an undefined tensor");
  STRATA_CHECK(src.device() != Device::Meta || self.device() == Device::Meta, "Cannot copy out of meta tensor; no data!");
  if (self.is_same(src)) return;
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, src);
  expand_geometry(src.sizes(), src.strides(), self.sizes());  // PyTorch's expand error if src does not fit
}
void copy__cpu(const Tensor& self, const Tensor& src, bool) {
  if (self.is_same(src)) return;
  copy_elements(self, src);
}

}  // namespace

void register_factory_ops(Dispatcher& d) {
  def_functional<empty_meta, empty_cpu>(
      d, "aten",
      "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      "empty");
  const char* like = "(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                     "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  def_functional<like_meta, empty_like_cpu>(d, "aten", std::string("empty_like") + like, "empty_like");
  def_functional<like_meta, ones_like_cpu>(d, "aten", std::string("ones_like") + like, "ones_like");
  def_functional<like_meta, zeros_like_cpu>(d, "aten", std::string("zeros_like") + like, "zeros_like");
  def_functional<new_empty_strided_meta, new_empty_strided_cpu>(
      d, "aten",
      "new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      "new_empty_strided");
  def_functional<clone_meta, clone_cpu>(d, "aten", "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", "clone");
  def_functional<to_copy_meta, to_copy_cpu>(
      d, "aten",
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
      "_to_copy");
  def_inplace<fill__check, fill__cpu>(d, "aten", "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", "fill_");
  def_inplace<zero__check, zero__cpu>(d, "aten", "zero_(Tensor(a!) self) -> Tensor(a!)", "zero_");
  d.allow_mixed_devices(def_inplace<copy__check, copy__cpu>(
      d, "aten", "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", "copy_"));
}

}  // namespace strata::ops
