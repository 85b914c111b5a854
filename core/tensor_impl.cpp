// core/tensor_impl.cpp: TensorImpl construction and its autograd/subclass bookkeeping.
#include "core/tensor_impl.h"

#include "core/autograd_meta.h"
#include "core/error.h"
#include "core/interposer.h"

namespace strata {

TensorImpl::TensorImpl(Storage storage, std::int64_t storage_offset, DimVector sizes, DimVector strides,
                       ScalarType dtype, Device device)
    : storage_(std::move(storage)),
      storage_offset_(storage_offset),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      numel_(numel_of(sizes_)),
      dtype_(dtype),
      device_(device),
      is_contiguous_(is_contiguous_layout(sizes_, strides_)),
      key_set_(backend_key(device)) {
  STRATA_INTERNAL_ASSERT(sizes_.size() == strides_.size(), "sizes and strides differ in length");
}

TensorImpl::~TensorImpl() = default;

AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_meta_) autograd_meta_ = std::make_unique<AutogradMeta>();
  return *autograd_meta_;
}

void TensorImpl::clear_autograd_meta() {
  autograd_meta_.reset();
  refresh_autograd_key();
}

void TensorImpl::refresh_autograd_key() {
  const bool needs = autograd_meta_ && (autograd_meta_->requires_grad || autograd_meta_->grad_fn);
  key_set_ = needs ? key_set_.add(DispatchKey::Autograd) : key_set_.remove(DispatchKey::Autograd);
}

void TensorImpl::set_subclass(IntrusivePtr<TensorSubclass> subclass) {
  subclass_ = std::move(subclass);
  key_set_ = subclass_ ? key_set_.add(DispatchKey::Python) : key_set_.remove(DispatchKey::Python);
}

}  // namespace strata
