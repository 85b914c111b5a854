// ops/factories.cpp: the factory front ends (torch::empty, zeros, ones, full, arange, eye, linspace,
// scalar_tensor, the *_like
// functions, new_empty_strided, randn, rand, randint) and from_blob. They take TensorOptions, which
// no schema has, and return through make_variable (Note [Factories return through make_variable]).
#include "ops/functions.h"

#include "ops/detach.h"
#include "ops/named_after.h"
#include "ops/torch_function.h"

namespace strata {

namespace {
using OptDtype = std::optional<ScalarType>;
using OptLayout = std::optional<Layout>;
using OptDevice = std::optional<Device>;
using OptBool = std::optional<bool>;
using OptFormat = std::optional<MemoryFormat>;
using Like = TypedOperator<Tensor(const Tensor&, OptDtype, OptLayout, OptDevice, OptBool, OptFormat)>;
using Factory = TypedOperator<Tensor(IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)>;
using GeneratorFactory = TypedOperator<Tensor(IntArrayRef, GeneratorImpl*, OptDtype, OptLayout, OptDevice, OptBool)>;

// Note [Factories return through make_variable]
// PyTorch's factory functions (torch::ones_like, torch::empty, torch::randn...) hand the kernel's
// result to make_variable, which keeps it when nothing else references it (its TensorImpl and its
// version counter are unique) and otherwise returns a shallow copy (shallow_copy_and_detach). A fresh
// result is referenced elsewhere only when a dispatch mode or subclass kept it, and then the copy
// dispatches aten::detach: a mode that keeps its outputs sees [ones_like, detach], one that keeps
// nothing sees [ones_like]. backward()'s implicit ones_like is such a call. Ops a handler calls
// through op.call are not factory functions (PyTorch's torch.ops.aten.* skip make_variable).
Tensor make_variable(Tensor t) {
  const TensorImpl* impl = t.impl();
  if (t.defined() && (impl->use_count() > 1 || impl->storage().use_count() > 1)) [[unlikely]] return shallow_copy_and_detach(t);
  return t;
}
}  // namespace

namespace detail {
void box_argument(std::vector<IValue>& out, const TensorOptions& options) {
  box_argument(out, options.dtype);
  box_argument(out, options.device);
}
}  // namespace detail

Tensor empty(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(empty, "torch.empty", "size, *, dtype, device", size, options);
  static const TypedOperator<Tensor(IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool, OptFormat)> op(
      "aten::empty", "memory_format");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor zeros(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(zeros, "torch.zeros", "size, *, dtype, device", size, options);
  static const Factory op("aten::zeros");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor ones(IntArrayRef size, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(ones, "torch.ones", "size, *, dtype, device", size, options);
  static const Factory op("aten::ones");
  return make_variable(op(size, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(full, "torch.full", "size, fill_value, *, dtype, device", size, fill_value, options);
  static const TypedOperator<Tensor(IntArrayRef, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::full");
  return make_variable(op(size, fill_value, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "end, *, dtype, device", end, options);
  static const TypedOperator<Tensor(Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange");
  return make_variable(op(end, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "start, end, *, dtype, device", start, end, options);
  static const TypedOperator<Tensor(Scalar, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange", "start");
  return make_variable(op(start, end, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(arange, "torch.arange", "start, end, step, *, dtype, device", start, end, step, options);
  static const TypedOperator<Tensor(Scalar, Scalar, Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::arange",
                                                                                                     "start_step");
  return make_variable(op(start, end, step, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor eye(std::int64_t n, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(eye, "torch.eye", "n, *, dtype, device", n, options);
  static const TypedOperator<Tensor(std::int64_t, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::eye");
  return make_variable(op(n, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor eye(std::int64_t n, std::int64_t m, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(eye, "torch.eye", "n, m, *, dtype, device", n, m, options);
  static const TypedOperator<Tensor(std::int64_t, std::int64_t, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::eye", "m");
  return make_variable(op(n, m, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor linspace(const Scalar& start, const Scalar& end, std::int64_t steps, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(linspace, "torch.linspace", "start, end, steps, *, dtype, device", start, end, steps, options);
  static const TypedOperator<Tensor(Scalar, Scalar, std::int64_t, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::linspace");
  return make_variable(op(start, end, steps, options.dtype, std::nullopt, options.device, std::nullopt));
}

Tensor scalar_tensor(const Scalar& s, const TensorOptions& options) {
  static const TypedOperator<Tensor(Scalar, OptDtype, OptLayout, OptDevice, OptBool)> op("aten::scalar_tensor");
  return op(s, options.dtype, std::nullopt, options.device, std::nullopt);
}

namespace {
void release_nothing(void*, void*) {}  // from_blob's storage does not own its data
}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  const ScalarType dtype = options.dtype.value_or(ScalarType::Float32);
  const std::size_t item = element_size(dtype);
  Storage storage;
  named_after("from_blob", [&] {
    STRATA_CHECK(options.device.value_or(Device::CPU) == Device::CPU, "from_blob: only CPU memory can be wrapped, not ",
                 *options.device);
    check_size_nonnegative(sizes);
    STRATA_CHECK(strides.size() == sizes.size(), "from_blob: ", sizes.size(), " sizes but ", strides.size(), " strides");
    for (std::int64_t s : strides) STRATA_CHECK(s >= 0, "from_blob: negative strides are not supported, got ", shape_str(strides));
    const auto nbytes = static_cast<std::size_t>(storage_nbytes(sizes, strides, item, 0));
    STRATA_CHECK(nbytes == 0 || data != nullptr, "from_blob: null data for ", nbytes, " bytes");
    STRATA_CHECK(reinterpret_cast<std::uintptr_t>(data) % item == 0, "from_blob: data at ", data,
                 " is not aligned to the ", item, "-byte elements of ", dtype_name(dtype));
    storage = StorageImpl::wrap(data, nbytes, &release_nothing, nullptr);
  });
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), 0, sizes, strides, dtype, Device::CPU));
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  DimVector strides(sizes.size(), 0);
  std::int64_t stride = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride = saturating_mul(stride, std::max<std::int64_t>(sizes[i], 1));
  }
  return from_blob(data, sizes, strides, options);
}

Tensor empty_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(empty_like, "torch.empty_like", "input, *, dtype, device", self, options);
  static const Like op("aten::empty_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor ones_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(ones_like, "torch.ones_like", "input, *, dtype, device", self, options);
  static const Like op("aten::ones_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor ones_like_python(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  static const Like op("aten::ones_like");
  return make_variable(op(self, self.dtype(), Layout::Strided, self.device(), false, memory_format));
}

Tensor zeros_like(const Tensor& self, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(zeros_like, "torch.zeros_like", "input, *, dtype, device", self, options);
  static const Like op("aten::zeros_like");
  return make_variable(op(self, options.dtype, std::nullopt, options.device, std::nullopt, std::nullopt));
}

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  STRATA_TORCH_FUNCTION(new_empty_strided, "torch.Tensor.new_empty_strided", "self, size, stride, *, dtype, device",
                        self, size, stride, options);
  static const TypedOperator<Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)> op(
      "aten::new_empty_strided");
  return op(self, size, stride, options.dtype, std::nullopt, options.device, std::nullopt);
}


namespace {
// randn and rand: the op's generator overload when a generator is given.
Tensor draw(const GeneratorFactory& with_generator, const Factory& without, IntArrayRef size,
            const TensorOptions& options, const Generator* generator) {
  if (generator)
    return make_variable(
        with_generator(size, generator_of(generator), options.dtype, std::nullopt, options.device, std::nullopt));
  return make_variable(without(size, options.dtype, std::nullopt, options.device, std::nullopt));
}
}  // namespace

Tensor randn(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  STRATA_TORCH_FUNCTION(randn, "torch.randn", "size, *, dtype, device, generator", size, options, generator);
  static const GeneratorFactory with_generator("aten::randn", "generator");
  static const Factory without("aten::randn");
  return draw(with_generator, without, size, options, generator);
}

Tensor rand(IntArrayRef size, const TensorOptions& options, const Generator* generator) {
  STRATA_TORCH_FUNCTION(rand, "torch.rand", "size, *, dtype, device, generator", size, options, generator);
  static const GeneratorFactory with_generator("aten::rand", "generator");
  static const Factory without("aten::rand");
  return draw(with_generator, without, size, options, generator);
}

Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef size, const TensorOptions& options,
               const Generator* generator) {
  STRATA_TORCH_FUNCTION(randint, "torch.randint", "low, high, size, *, dtype, device, generator", low, high, size,
                        options, generator);
  if (generator) {
    static const TypedOperator<Tensor(std::int64_t, std::int64_t, IntArrayRef, GeneratorImpl*, OptDtype, OptLayout,
                                      OptDevice, OptBool)>
        op("aten::randint", "low_generator");
    return make_variable(op(low, high, size, generator_of(generator), options.dtype, std::nullopt, options.device, std::nullopt));
  }
  static const TypedOperator<Tensor(std::int64_t, std::int64_t, IntArrayRef, OptDtype, OptLayout, OptDevice, OptBool)> op(
      "aten::randint", "low");
  return make_variable(op(low, high, size, options.dtype, std::nullopt, options.device, std::nullopt));
}

}  // namespace strata
