// core/tensor.h: Tensor, a cheap handle (one pointer) to a TensorImpl, with metadata accessors, data
// access and printing. Operations on tensors (add, mm, view...) are free functions in ops/ that go
// through the dispatcher; autograd entry points (requires_grad_, backward) live in autograd/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "util/error.h"
#include "scalar.h"
#include "tensor_impl.h"

namespace strata {

namespace autograd {
class Node;
}
namespace indexing {
class TensorIndex;  // ops/indexing.h
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Note [An undefined tensor points at a sentinel]: an undefined Tensor's impl is the sentinel.
  bool defined() const { return impl_.get() != IntrusiveNull<TensorImpl>::singleton(); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  std::uint32_t use_count() const { return impl_.use_count(); }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // Metadata. On an undefined tensor these answer as LibTorch's do (dim() 1, sizes() [0], numel() 0,
  // storage_offset() 0, is_contiguous() true; no keys) or raise as LibTorch's do (strides(),
  // stride(d), device(); dtype(), which LibTorch answers with a dtype strata does not have).
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const {
    if (!defined()) [[unlikely]] throw_undefined("strides() called on an undefined Tensor");
    return impl_->strides();
  }
  std::int64_t dim() const { return impl_->dim(); }
  // Negative dims count from the end. Unlike ops, these do not treat a 0-d tensor as 1-d.
  std::int64_t size(std::int64_t d) const { return impl_->sizes()[dim_index(d)]; }
  std::int64_t stride(std::int64_t d) const {
    const std::size_t i = dim_index(d);  // LibTorch wraps the dimension first
    return strides()[i];
  }
  std::int64_t numel() const { return impl_->numel(); }
  ScalarType dtype() const {
    if (!defined()) [[unlikely]] throw_undefined("dtype() called on an undefined Tensor");
    return impl_->dtype();
  }
  Device device() const {
    if (!defined()) [[unlikely]] throw_undefined("tensor does not have a device");
    return impl_->device();
  }
  std::int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_non_overlapping_and_dense() const {
    return strata::is_non_overlapping_and_dense(impl_->sizes(), impl_->strides());
  }
  bool is_meta() const { return impl_->device() == Device::Meta; }
  DispatchKeySet key_set() const { return impl_->key_set(); }
  TensorSubclass* subclass() const { return impl_->subclass(); }

  // Typed pointer to the first element. Throws if the dtype differs or the tensor has no data.
  template <typename T>
  T* data_ptr() const {
    check_data_access(scalar_type_of<T>());
    return static_cast<T*>(impl_->data());
  }
  void* raw_data() const {
    check_data_access();
    return impl_->data();
  }

  // The value of a one-element tensor (PyTorch's .item()).
  Scalar item() const;
  template <typename T>
  T item() const { return item().to<T>(); }
  // All elements in row-major order, converted to T as copy_ converts them (follows strides; for
  // tests and serialisation).
  template <typename T>
  std::vector<T> to_vector() const;

  // Autograd state, read-only here (see autograd/variable.h for requires_grad_ and backward). An
  // undefined Tensor answers as PyTorch's does: no grad, no grad_fn, a leaf that does not require grad.
  bool requires_grad() const { return impl_->requires_grad(); }
  bool is_leaf() const;
  bool is_inference() const { return impl_->is_inference(); }  // Note [Inference tensors], core/inference_mode.h
  // undefined Tensor when no gradient has been accumulated; on a non-leaf that does not retain its
  // grad and has none, warns as LibTorch's does (Note [Reading a non-leaf's grad warns], tensor.cpp)
  const Tensor& grad() const;
  // LibTorch's autograd methods, defined in autograd/ (backward.cpp, variable.cpp): loss.backward()
  // and x.requires_grad_(), as the free functions strata::backward and strata::requires_grad_.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                const std::optional<std::vector<Tensor>>& inputs = std::nullopt) const;
  const Tensor& requires_grad_(bool requires_grad = true) const;
  autograd::Node* grad_fn() const;  // null on leaves and plain tensors

  std::string str() const;  // PyTorch's repr: tensor([[...]], requires_grad=True)

  // LibTorch's Tensor methods: each forwards to the free function of the same name, x.mm(w) to
  // mm(x, w). Declared here and defined inline where those functions are (Note [Tensor methods are
  // defined in ops], ops/tensor_methods.h; matmul in nn/functional.h).
  Tensor t() const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor slice(std::int64_t dim = 0, std::optional<std::int64_t> start = std::nullopt,
               std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  // Pieces along dim, each a view of this tensor (ops/split_ops.cpp): t.split(2), t.split({1, 2}), t.chunk(3, 1).
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, std::int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  Tensor contiguous() const;
  Tensor to(ScalarType dtype) const;
  Tensor clone() const;
  Tensor detach() const;
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  const Tensor& mul_(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu(std::string_view approximate = "none") const;
  Tensor softmax(std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;  // (values, indices)
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor dot(const Tensor& tensor) const;
  Tensor mv(const Tensor& vec) const;
  Tensor matmul(const Tensor& other) const;
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const;
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor log_softmax(std::int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;  // nn/functional.h
  // LibTorch's indexing (ops/indexing.h): a[0] is select(0, 0); index({Slice(1, 3), 0}) the views
  // Python's a[1:3, 0] dispatches; index_put_ writes through them.
  Tensor operator[](std::int64_t index) const;
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  std::tuple<Tensor, Tensor> sort(std::int64_t dim = -1, bool descending = false) const;  // (values, indices)
  std::tuple<Tensor, Tensor> topk(std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;  // (values, indices)
  // Math, comparisons and masks (ops/native/math_ops.cpp, compare_ops.cpp, mask_ops.cpp).
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor log() const;
  Tensor abs() const;
  Tensor sgn() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor pow(const Scalar& exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor clamp(const std::optional<Scalar>& min = std::nullopt, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  const Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor triu(std::int64_t diagonal = 0) const;
  Tensor tril(std::int64_t diagonal = 0) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;

 private:
  // `d` wrapped into [0, dim()). One compare on the hot path (Note [Checks cost nothing until they
  // fail]); the failure throws PyTorch's wording from an out-of-line function.
  std::size_t dim_index(std::int64_t d) const {
    const std::int64_t n = dim();
    const std::int64_t wrapped = d < 0 ? d + n : d;
    if (static_cast<std::uint64_t>(wrapped) >= static_cast<std::uint64_t>(n)) [[unlikely]] throw_bad_dim(d);
    return static_cast<std::size_t>(wrapped);
  }
  [[noreturn]] void throw_bad_dim(std::int64_t d) const;
  // An accessor LibTorch refuses on an undefined tensor, with LibTorch's message.
  [[noreturn, gnu::cold]] static void throw_undefined(const char* message);
  // Refuses an undefined, wrapper or meta tensor; the first form also a dtype other than `expected`.
  void check_data_access(ScalarType expected) const;
  void check_data_access() const;
  IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// LibTorch's at::TensorList: the argument type of a Tensor[] (cat, stack). A braced list of tensors
// converts to it for the duration of the call.
using TensorList = ArrayRef<Tensor>;

// One undefined Tensor for functions that return a reference to "no tensor" (grad() of a tensor
// without autograd state, an unboxed None). Constant-initialised, so reading it needs no guard.
namespace detail {
extern const Tensor undefined_tensor;
}

// A new 0-d CPU tensor holding `value` as `dtype`, made without dispatching anything (tensor(values),
// ops/tensor_literal.h, is the factory a dispatch mode sees).
Tensor scalar_tensor(Scalar value, ScalarType dtype);

namespace detail {
// Fresh tensors for kernels and factories: storage for CPU, none for meta. Contents uninitialised.
Tensor make_tensor(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device);
Tensor make_contiguous_tensor(IntArrayRef sizes, ScalarType dtype, Device device);
// A new TensorImpl over `base`'s storage with other geometry: the one way views are made.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset);
// A view of `base` with its own geometry (what detach makes), copied rather than recomputed.
Tensor make_alias(const Tensor& base);
// A view of `base` with dimensions `dim0` and `dim1` (in range) swapped (what t and transpose make).
Tensor make_transposed(const Tensor& base, std::size_t dim0, std::size_t dim1);
}  // namespace detail

}  // namespace strata
