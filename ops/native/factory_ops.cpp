// ops/native/factory_ops.cpp: making, converting and filling tensors: empty.memory_format, zeros, ones, full,
// arange (and .start, .start_step), eye (and .m), linspace, scalar_tensor, empty_like, ones_like, zeros_like, new_empty_strided, clone,
// _to_copy, fill_.Scalar, zero_, copy_. The *_like ops and clone follow PyTorch's preserve_format: a dense input's strides are kept (so a transposed tensor stays
// transposed), anything else becomes contiguous.
#include <cmath>
#include <limits>
#include <optional>

#include "core/util/checked_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
#include "ops/op_table.h"
#include "ops/native/output_layout.h"

namespace strata::ops {

namespace {

// The strides a preserve_format copy of `self` gets (empty: contiguous): its own when it is dense,
// else dense ones in its dimension order (PyTorch's infer_dense_strides).
// A contiguous tensor whose size-1 dimensions have other strides keeps them too, as PyTorch's
// empty_like copies a dense tensor's strides as they are.
bool has_contiguous_strides(const Tensor& self) {
  std::int64_t expected = 1;
  for (std::int64_t d = self.dim() - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    if (self.strides()[i] != expected) return false;
    // Past a size too large for the contiguous strides (an empty tensor's other sizes can be), no stride
    // can be the contiguous one.
    if (d > 0 && mul_overflows(expected, std::max<std::int64_t>(self.sizes()[i], 1), &expected)) return false;
  }
  return true;
}

DimVector preserved_strides(const Tensor& self, std::optional<MemoryFormat> format) {
  if (format.value_or(MemoryFormat::Preserve) != MemoryFormat::Preserve) return {};
  if (self.is_contiguous() && has_contiguous_strides(self)) return {};
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

}  // namespace

void fill_scalar(const Tensor& t, const Scalar& value) {
  visit_all_dtypes(t.dtype(), [&](auto zero) { fill_with(t, scalar_to_element<decltype(zero)>(value)); });
}

namespace {

// ---- empty.memory_format ----
TensorSpec empty_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                      std::optional<bool>, std::optional<MemoryFormat>) {
  for (std::int64_t s : size) STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(size));
  return {DimVector(size), dtype.value_or(ScalarType::Float32), {}};
}
void empty_cpu(const Tensor&, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
               std::optional<bool>, std::optional<MemoryFormat>) {}

// ---- zeros, ones, full ----
TensorSpec zeros_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                      std::optional<bool>) {
  return empty_meta(size, dtype, std::nullopt, std::nullopt, std::nullopt, std::nullopt);
}
void zeros_cpu(const Tensor& out, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
               std::optional<bool>) {
  fill_scalar(out, Scalar(0));
}
void ones_cpu(const Tensor& out, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
              std::optional<bool>) {
  fill_scalar(out, Scalar(1));
}

// full without a dtype takes fill_value's: bool, int64, or the default float dtype (PyTorch's
// infer_full_options).
TensorSpec full_meta(IntArrayRef size, Scalar fill_value, std::optional<ScalarType> dtype, std::optional<Layout>,
                     std::optional<Device>, std::optional<bool>) {
  return empty_meta(size, dtype.value_or(fill_value.default_dtype()), std::nullopt, std::nullopt, std::nullopt, std::nullopt);
}
void full_cpu(const Tensor& out, IntArrayRef, Scalar fill_value, std::optional<ScalarType>, std::optional<Layout>,
              std::optional<Device>, std::optional<bool>) {
  fill_scalar(out, fill_value);
}

// ---- arange, arange.start, arange.start_step ----
// PyTorch's arange and arange_out: without a dtype, int64 when start, end and step are all integers
// (bools count), else the default float dtype. The bounds and step are read in the dtype's
// accumulation type (int64 for int64, double for the floating types), and the length is computed in
// integers for int64 and in double otherwise.
ScalarType arange_dtype(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point() ? ScalarType::Int64
                                                                                              : ScalarType::Float32;
}

std::int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype) {
  STRATA_CHECK(dtype != ScalarType::Bool, "\"arange_cpu\" not implemented for 'Bool'");  // PyTorch's spelling
  double length = 0;
  if (dtype == ScalarType::Int64) {
    const std::int64_t from = start.to<std::int64_t>(), to = end.to<std::int64_t>(), by = step.to<std::int64_t>();
    STRATA_CHECK(by != 0, "step must be nonzero");
    STRATA_CHECK((by > 0 && to >= from) || (by < 0 && to <= from), "upper bound and larger bound inconsistent with step sign");
    // ceil((end - start) / step) in unsigned arithmetic, where the distance cannot overflow.
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    const std::uint64_t distance = by > 0 ? u(to) - u(from) : u(from) - u(to);
    const std::uint64_t stride = by > 0 ? u(by) : std::uint64_t{0} - u(by);
    length = static_cast<double>(distance / stride + (distance % stride != 0));
  } else {
    const double from = start.to<double>(), to = end.to<double>(), by = step.to<double>();
    STRATA_CHECK(by > 0 || by < 0, "step must be nonzero");
    STRATA_CHECK(std::isfinite(from) && std::isfinite(to), "unsupported range: ", from, " -> ", to);
    STRATA_CHECK((by > 0 && to >= from) || (by < 0 && to <= from), "upper bound and larger bound inconsistent with step sign");
    length = std::ceil((to - from) / by);
  }
  // 2^63 itself does not fit int64 (INT64_MAX rounds up to it as a double).
  STRATA_CHECK(length >= 0 && length < 0x1p63, "invalid size, possible overflow?");
  return static_cast<std::int64_t>(length);
}

TensorSpec arange_start_step_meta(Scalar start, Scalar end, Scalar step, std::optional<ScalarType> dtype,
                                  std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  const ScalarType t = arange_dtype(start, end, step, dtype);
  return {DimVector{arange_length(start, end, step, t)}, t, {}};
}
// Element i is start + i * step in the accumulation type, then converted.
void arange_start_step_cpu(const Tensor& out, Scalar start, Scalar, Scalar step, std::optional<ScalarType>,
                           std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  const std::int64_t n = out.numel();
  if (out.dtype() == ScalarType::Int64) {
    std::int64_t* p = data_of<std::int64_t>(out);
    const std::int64_t from = start.to<std::int64_t>(), by = step.to<std::int64_t>();
    // Every value lies between start and end, but i * step alone may not fit: wrapping unsigned arithmetic.
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(u(from) + u(i) * u(by));
    return;
  }
  const double from = start.to<double>(), by = step.to<double>();
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      T* p = data_of<T>(out);
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(from + static_cast<double>(i) * by);
    }
  });
}

TensorSpec arange_start_meta(Scalar start, Scalar end, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                             std::optional<Device> device, std::optional<bool> pin) {
  return arange_start_step_meta(start, end, Scalar(1), dtype, layout, device, pin);
}
void arange_start_cpu(const Tensor& out, Scalar start, Scalar end, std::optional<ScalarType> dtype,
                      std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin) {
  arange_start_step_cpu(out, start, end, Scalar(1), dtype, layout, device, pin);
}
TensorSpec arange_meta(Scalar end, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                       std::optional<Device> device, std::optional<bool> pin) {
  return arange_start_step_meta(Scalar(0), end, Scalar(1), dtype, layout, device, pin);
}
void arange_cpu(const Tensor& out, Scalar end, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device> device, std::optional<bool> pin) {
  arange_start_step_cpu(out, Scalar(0), end, Scalar(1), dtype, layout, device, pin);
}

// ---- eye, eye.m: ones on the main diagonal of an n x m matrix ----
TensorSpec eye_m_meta(std::int64_t n, std::int64_t m, std::optional<ScalarType> dtype, std::optional<Layout>,
                      std::optional<Device>, std::optional<bool>) {
  STRATA_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  STRATA_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  return {DimVector{n, m}, dtype.value_or(ScalarType::Float32), {}};
}
void eye_m_cpu(const Tensor& out, std::int64_t n, std::int64_t m, std::optional<ScalarType>, std::optional<Layout>,
               std::optional<Device>, std::optional<bool>) {
  fill_scalar(out, Scalar(0));
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* p = data_of<T>(out);
    for (std::int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = T(1);
  });
}
TensorSpec eye_meta(std::int64_t n, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                    std::optional<Device> device, std::optional<bool> pin) {
  return eye_m_meta(n, n, dtype, layout, device, pin);
}
void eye_cpu(const Tensor& out, std::int64_t n, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device> device, std::optional<bool> pin) {
  eye_m_cpu(out, n, n, dtype, layout, device, pin);
}

// ---- linspace: `steps` values from start to end ----
// Note [linspace computes PyTorch's values]
// PyTorch's CPU kernel (RangeFactoriesKernel.cpp) computes element i from the nearer end: start +
// step * i in the first half, end - step * (steps - i - 1) in the second, each one fused multiply-add
// as its compiler contracts them. Its vectorised loop (AVX2: 32-byte vectors of V elements) takes the
// elements two vectors at a time, and makes each vector's V values as base + k * step (not fused) from
// the base of its first element, choosing the end by that first element; the last elements, fewer
// than 2V, take the scalar formula. The values differ in the last bit from a plain formula, so strata
// follows the same steps. Integer dtypes compute in double and truncate (the base first). PyTorch
// splits more than 32768 steps across threads, each part starting its own vectors; strata does not.
template <typename T>
void linspace_fill(T* p, std::int64_t steps, const Scalar& start_value, const Scalar& end_value) {
  using Step = std::conditional_t<std::is_integral_v<T>, double, T>;
  const T start = start_value.to<T>(), end = end_value.to<T>();
  if (steps == 1) {
    p[0] = start;
    return;
  }
  const Step step = (static_cast<Step>(end) - static_cast<Step>(start)) / static_cast<Step>(steps - 1);
  const std::int64_t halfway = steps / 2;
  const auto at = [&](std::int64_t i) {
    return static_cast<T>(i < halfway ? std::fma(step, static_cast<Step>(i), static_cast<Step>(start))
                                      : std::fma(-step, static_cast<Step>(steps - i - 1), static_cast<Step>(end)));
  };
  constexpr std::int64_t kVector = 32 / sizeof(T);
  std::int64_t i = 0;
  const auto vector_at = [&](std::int64_t first) {
    const T base = at(first);
    for (std::int64_t k = 0; k < kVector; ++k) p[first + k] = static_cast<T>(static_cast<Step>(base) + static_cast<Step>(k) * step);
  };
  for (; i + 2 * kVector <= steps; i += 2 * kVector) {  // two vectors at a time while two remain
    vector_at(i);
    vector_at(i + kVector);
  }
  for (; i < steps; ++i) p[i] = at(i);
}

TensorSpec linspace_meta(Scalar, Scalar, std::int64_t steps, std::optional<ScalarType> dtype, std::optional<Layout>,
                         std::optional<Device>, std::optional<bool>) {
  STRATA_CHECK(steps >= 0, "number of steps must be non-negative");
  const ScalarType t = dtype.value_or(ScalarType::Float32);
  STRATA_CHECK(t != ScalarType::Bool, "\"linspace_cpu\" not implemented for 'Bool'");
  return {DimVector{steps}, t, {}};
}
void linspace_cpu(const Tensor& out, Scalar start, Scalar end, std::int64_t steps, std::optional<ScalarType>,
                  std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  if (steps == 0) return;
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) linspace_fill(data_of<T>(out), steps, start, end);
  });
}

// ---- scalar_tensor: a 0-d tensor holding a number (the default float dtype unless given) ----
TensorSpec scalar_tensor_meta(Scalar, std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                              std::optional<bool>) {
  return {DimVector{}, dtype.value_or(ScalarType::Float32), {}};
}
void scalar_tensor_cpu(const Tensor& out, Scalar s, std::optional<ScalarType>, std::optional<Layout>,
                       std::optional<Device>, std::optional<bool>) {
  fill_scalar(out, s);
}

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
  STRATA_CHECK(size.size() == stride.size(), "dimensionality of sizes (", size.size(),
               ") must match dimensionality of strides (", stride.size(), ")");  // empty_strided's words
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
  // Only a destination with data needs the source's: a meta or fake self copies shapes alone, and a
  // source without data (meta, or a fake, which reports its fake device) has none to give.
  STRATA_CHECK(src.impl()->has_data() || !self.impl()->has_data(), "Cannot copy out of meta tensor; no data!");
  if (self.is_same(src)) return;
  assert_no_internal_overlap(self);
  assert_no_partial_overlap(self, src);
  // PyTorch's TensorIterator errors (resize_outputs(false)): src must broadcast to exactly self's shape.
  if (self.sizes() == src.sizes()) return;
  const DimVector shape = broadcast_shapes(self.sizes(), src.sizes());
  STRATA_CHECK(IntArrayRef(shape).size() == self.sizes().size() && std::equal(shape.begin(), shape.end(), self.sizes().begin()),
               "output with shape ", shape_str(self.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
}
void copy__cpu(const Tensor& self, const Tensor& src, bool) {
  if (self.is_same(src)) return;
  copy_elements(self, src);
}

}  // namespace

// Kernels that write or copy elements of any dtype themselves, float16 and bfloat16 included (Note
// [float16 and bfloat16 compute in float]): no float32 detour.
template <> inline constexpr bool detail::kComputesReducedFloat<&empty_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&zeros_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&ones_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&full_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&scalar_tensor_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&empty_like_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&ones_like_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&zeros_like_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&new_empty_strided_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&clone_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&to_copy_cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&fill__cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&zero__cpu> = true;
template <> inline constexpr bool detail::kComputesReducedFloat<&copy__cpu> = true;

// register_factory_ops(): the rows of factory_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/factory_ops_rows.inc"

}  // namespace strata::ops
