// core/tensor.cpp: Tensor accessors, host-data constructors and the view/allocation helpers.
#include "core/tensor.h"

#include <cstring>

#include "core/autograd_meta.h"
#include "core/element_conversion.h"
#include "core/interpose/interposer.h"
#include "core/tensor_hooks.h"
#include "core/util/warning.h"

namespace strata {

void Tensor::throw_bad_dim(std::int64_t d) const {
  STRATA_CHECK(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  wrap_dim(d, dim());  // throws PyTorch's "Dimension out of range" error
  detail::throw_internal("dim_index", __FILE__, __LINE__, detail::str_cat("dimension ", d, " is in range"));
}

void Tensor::throw_undefined(const char* message) { detail::throw_error(message); }

// Note [An undefined tensor answers or refuses]
// Tensor() is PyTorch's undefined tensor: an absent optional argument, or a gradient not computed
// yet. Its autograd queries answer as PyTorch's do (requires_grad() false, is_leaf() true, grad() and
// grad_fn() empty), since code asks them of gradients that may not exist. Its metadata accessors
// answer or raise as LibTorch's do, with no branch where they answer (Note [An undefined tensor points
// at a sentinel], core/tensor_impl.h). Every function that takes a tensor's data or changes its state
// refuses an undefined one with a named error: a dispatched op through the dispatcher's check (Note
// [Boxed calls are checked where keys are read]), a composite (reshape, linear, ...) itself, data
// access and item() here, requires_grad_ and set_grad in autograd/variable.cpp.
// Only a tensor with storage has data: not a wrapper, a meta tensor, or a view of a wrapper taken
// below the interposer (Note [A view keeps its source's keys]).
void Tensor::check_data_access() const {
  STRATA_CHECK(defined(), "cannot access the data of an undefined tensor");
  // A wrapper subclass has no data of its own, nor has a fake (a meta tensor with a payload); a
  // make_subclass tensor over real data has.
  STRATA_CHECK(!subclass() || impl_->has_data(), "cannot access the data of a ", subclass()->type_name(),
               impl_->storage() ? " tensor: it has no data" : " wrapper tensor; unwrap it first");
  STRATA_CHECK(!is_meta(), "Cannot access data pointer of Tensor that doesn't have storage (device meta)");
  STRATA_CHECK(impl_->has_data(), "Cannot access data pointer of Tensor that doesn't have storage");
}

void Tensor::check_data_access(ScalarType expected) const {
  check_data_access();
  STRATA_CHECK(dtype() == expected, "expected scalar type ", expected, " but found ", dtype());
}

Scalar Tensor::item() const {
  STRATA_CHECK(defined(), "item() on an undefined tensor");
  STRATA_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  check_data_access(dtype());
  return visit_all_dtypes(dtype(), [&](auto zero) -> Scalar {
    using T = decltype(zero);
    const T value = load_element(static_cast<const T*>(impl_->data()));
    if constexpr (is_float_storage_v<T>) return Scalar(static_cast<double>(static_cast<float>(value)));
    else return Scalar(value);
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check_data_access();
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(numel()));
  if (numel() == 0) return out;
  visit_all_dtypes(dtype(), [&](auto zero) {
    using S = decltype(zero);
    const S* base = static_cast<const S*>(impl_->data());
    DimVector index(static_cast<std::size_t>(dim()), 0);
    for (std::int64_t n = 0; n < numel(); ++n) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * strides()[d];
      out.push_back(convert_element<T>(load_element(base + offset)));
      for (std::size_t d = index.size(); d-- > 0;) {
        if (++index[d] < sizes()[d]) break;
        index[d] = 0;
      }
    }
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;
template std::vector<std::int8_t> Tensor::to_vector<std::int8_t>() const;

bool Tensor::is_leaf() const {
  const AutogradMeta* meta = impl_->autograd_meta();
  return !meta || !meta->grad_fn;
}

constinit const Tensor detail::undefined_tensor;

// Note [Reading a non-leaf's grad warns]
// As LibTorch's TensorBody.h grad(): reading .grad of a non-leaf that does not retain its grad, and
// so has none, is almost always a mistake for the leaf's; it warns (each time, as TORCH_WARN does).
// Only the reader's path does: the engine and the optimizers read the meta or only leaves.
namespace {
[[gnu::cold, gnu::noinline]] void warn_non_leaf_grad() {
  STRATA_WARN("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
              "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
              "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
              "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.");
}
}  // namespace

const Tensor& Tensor::grad() const {
  const AutogradMeta* meta = impl_->autograd_meta();
  if (!meta) return detail::undefined_tensor;
  if (meta->grad_fn && !meta->grad.defined() && !(meta->hooks && meta->hooks->retained)) [[unlikely]] warn_non_leaf_grad();
  return meta->grad;
}

autograd::Node* Tensor::grad_fn() const {
  const AutogradMeta* meta = impl_->autograd_meta();
  // A view may regenerate its grad_fn; views exist before autograd registers, but need it only after.
  if (meta && meta->is_view() && autograd_hooks()) [[unlikely]] return autograd_hooks()->view_grad_fn(*this);
  return meta ? meta->grad_fn : nullptr;
}

Tensor scalar_tensor(Scalar value, ScalarType dtype) {
  Tensor out = detail::make_contiguous_tensor({}, dtype, Device::CPU);
  visit_all_dtypes(dtype, [&](auto zero) {
    using T = decltype(zero);
    *out.data_ptr<T>() = scalar_to_element<T>(value);
  });
  return out;
}

namespace detail {

Tensor make_tensor(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  check_size_nonnegative(sizes);
  STRATA_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  // The storage must cover the largest offset the strides can reach; checked on meta too, as in PyTorch.
  const std::int64_t nbytes = storage_nbytes(sizes, strides, element_size(dtype));
  Storage storage;
  if (device == Device::CPU) storage = StorageImpl::allocate(static_cast<std::size_t>(nbytes));
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), 0, sizes, strides, dtype, device));
}

Tensor make_contiguous_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  return Tensor(TensorImpl::make_contiguous(sizes, dtype, device));
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset) {
  return Tensor(TensorImpl::make_view(*base.impl(), storage_offset, sizes, strides));
}

// make_transposed and make_alias are in tensor_impl.cpp, where the TensorImpl functions they wrap inline.

}  // namespace detail
}  // namespace strata
