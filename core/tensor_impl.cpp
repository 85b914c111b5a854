// core/tensor_impl.cpp: TensorImpl construction and its autograd/subclass bookkeeping.
#include "core/tensor_impl.h"

#include <algorithm>
#include <type_traits>

#include "core/autograd_meta.h"
#include "core/util/error.h"
#include "core/interpose/interposer.h"
#include "core/util/small_object_pool.h"

namespace strata {

constexpr TensorImpl::TensorImpl(Undefined)
    : storage_offset_(0), numel_(0), dtype_(ScalarType::Float32), device_(Device::CPU), is_contiguous_(true) {}

constinit TensorImpl detail::undefined_tensor_impl{TensorImpl::Undefined{}};

TensorImpl::TensorImpl(Storage storage, std::int64_t storage_offset, IntArrayRef sizes, IntArrayRef strides,
                       ScalarType dtype, Device device)
    : storage_(std::move(storage)),
      storage_offset_(storage_offset),
      geometry_(sizes.size()),
      numel_(numel_of(sizes)),
      dtype_(dtype),
      device_(device),
      is_contiguous_(is_contiguous_layout(sizes, strides)),
      key_set_(backend_key(device)) {
  STRATA_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  std::copy(sizes.begin(), sizes.end(), geometry_.sizes_data());
  std::copy(strides.begin(), strides.end(), geometry_.strides_data());
  // A tensor without elements may have any offset (as_strided allows it, as PyTorch does), so its
  // first element's address is never formed: it would overflow or leave the block.
  if (storage_ && storage_->data()) {
    data_ = storage_->data();
    if (numel_ > 0) data_ = static_cast<char*>(data_) + storage_offset_ * static_cast<std::int64_t>(element_size(dtype_));
  }
}

TensorImpl::TensorImpl(IntArrayRef sizes, IntArrayRef strides, KnownLayout layout, ScalarType dtype, Device device)
    : storage_offset_(0),
      geometry_(sizes.size()),
      numel_(layout.numel),
      dtype_(dtype),
      device_(device),
      is_contiguous_(layout.contiguous),
      key_set_(backend_key(device)) {
  STRATA_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  std::copy(sizes.begin(), sizes.end(), geometry_.sizes_data());
  std::copy(strides.begin(), strides.end(), geometry_.strides_data());
}

// Inlined into alias_of, its only caller.
[[gnu::always_inline]] inline TensorImpl::TensorImpl(const TensorImpl& source, Alias)
    : storage_(source.storage_),
      data_(source.data_),
      storage_offset_(source.storage_offset_),
      geometry_(source.geometry_),
      numel_(source.numel_),
      dtype_(source.dtype_),
      device_(source.device_),
      is_contiguous_(source.is_contiguous_),
      key_set_(view_keys(source)) {}

// A pooled copy of `source` (TensorImpl's operator new; a throwing constructor returns the block).
// Inline, with the allocation and the copy: make_alias and make_transposed are one function each.
[[gnu::always_inline]] inline IntrusivePtr<TensorImpl> TensorImpl::alias_of(const TensorImpl& source) {
  return IntrusivePtr<TensorImpl>::adopt(new TensorImpl(source, Alias{}));
}

IntrusivePtr<TensorImpl> TensorImpl::make_alias(const TensorImpl& source) { return alias_of(source); }

// Note [A transpose's contiguity]
// Swapping two dimensions of sizes above 1 in a contiguous tensor with elements never leaves it
// contiguous: the outer one's stride, now at the inner position, is at least twice what that position
// needs. That is the common transpose (t() of a weight or an input), so only the others run the
// general check (a size-1 dimension, an empty tensor, or a source already transposed).
IntrusivePtr<TensorImpl> TensorImpl::make_transposed(const TensorImpl& source, std::size_t dim0, std::size_t dim1) {
  IntrusivePtr<TensorImpl> impl = alias_of(source);
  if (dim0 != dim1) {
    std::int64_t* sizes = impl->geometry_.sizes_data();
    std::int64_t* strides = impl->geometry_.strides_data();
    std::swap(sizes[dim0], sizes[dim1]);
    std::swap(strides[dim0], strides[dim1]);
    if (source.is_contiguous_ && source.numel_ > 0 && sizes[dim0] > 1 && sizes[dim1] > 1) impl->is_contiguous_ = false;
    else impl->is_contiguous_ = is_contiguous_layout(impl->sizes(), impl->strides());
  }
  return impl;
}

// Note [A view's contiguity]
// view's sizes have its input's numel, and view_strides gives strides that address each element where
// `source` had it (element i of the view, counted in row-major order, is element i of the source). So
// make_reshaped copies the numel, offset and first-element address instead of recomputing them. A
// contiguous source has element i at offset i, so the view does too: it is contiguous
// (is_contiguous_layout skips size-1 dimensions, whose strides view_strides may carry over, and passes
// any tensor without elements). Only a view of a non-contiguous source runs the check.
[[gnu::always_inline]] inline TensorImpl::TensorImpl(const TensorImpl& source, IntArrayRef sizes, IntArrayRef strides)
    : storage_(source.storage_),
      data_(source.data_),  // same offset and numel, so the same first element
      storage_offset_(source.storage_offset_),
      geometry_(sizes.size()),
      numel_(source.numel_),
      dtype_(source.dtype_),
      device_(source.device_),
      is_contiguous_(source.is_contiguous_ || is_contiguous_layout(sizes, strides)),
      key_set_(view_keys(source)) {
  std::int64_t* out_sizes = geometry_.sizes_data();
  std::int64_t* out_strides = geometry_.strides_data();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out_sizes[i] = sizes[i];
    out_strides[i] = strides[i];
  }
}

IntrusivePtr<TensorImpl> TensorImpl::make_reshaped(const TensorImpl& source, IntArrayRef sizes, IntArrayRef strides) {
  STRATA_INTERNAL_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  return IntrusivePtr<TensorImpl>::adopt(new TensorImpl(source, sizes, strides));  // from the pool, like any view
}

IntrusivePtr<TensorImpl> TensorImpl::make_view(const TensorImpl& source, std::int64_t storage_offset, IntArrayRef sizes,
                                               IntArrayRef strides) {
  auto impl = IntrusivePtr<TensorImpl>::make(source.storage_, storage_offset, sizes, strides, source.dtype_, source.device_);
  impl->key_set_ = view_keys(source);
  return impl;
}

namespace detail {
// Defined here rather than in tensor.cpp, so the TensorImpl functions they wrap inline into them:
// every t, transpose and detach makes one of these.
Tensor make_alias(const Tensor& base) { return Tensor(TensorImpl::make_alias(*base.impl())); }
Tensor make_transposed(const Tensor& base, std::size_t dim0, std::size_t dim1) {
  return Tensor(TensorImpl::make_transposed(*base.impl(), dim0, dim1));
}
}  // namespace detail

// Inlined into make_contiguous, its only caller: a fresh tensor's construction is one function.
[[gnu::always_inline]] inline TensorImpl::TensorImpl(Storage&& storage, IntArrayRef sizes, Contiguous geometry, ScalarType dtype,
                                                     Device device)
    : storage_(std::move(storage)),
      data_(storage_ ? storage_->data() : nullptr),
      storage_offset_(0),
      geometry_(sizes.size()),
      numel_(geometry.numel),
      dtype_(dtype),
      device_(device),
      is_contiguous_(true),
      key_set_(backend_key(device)) {
  // make_contiguous checked that these strides fit int64; the product past the outermost one is
  // never formed, since it alone may overflow (for [2^62, 4, 0]).
  std::int64_t* out_sizes = geometry_.sizes_data();
  std::int64_t* out_strides = geometry_.strides_data();
  std::int64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    out_sizes[i] = sizes[i];
    out_strides[i] = running;
    if (i > 0) running *= std::max<std::int64_t>(sizes[i], 1);
  }
}

[[gnu::always_inline]] inline TensorImpl::~TensorImpl() {
  if (autograd_meta_) destroy_autograd_meta();
}

// Note [One allocation per fresh tensor]
// Most tensors a kernel makes are fresh and contiguous. make_contiguous places the TensorImpl inside
// its storage's block (storage header, TensorImpl, room for its AutogradMeta, data), so a tiny op's
// output costs one malloc and one free instead of two of each, or three when autograd records it.
// The block belongs to the storage: when the TensorImpl dies it is destroyed in place and drops its
// storage reference last; views that share the storage keep the block (and the dead TensorImpl
// bytes in it) alive until they go too.
IntrusivePtr<TensorImpl> TensorImpl::make_contiguous(IntArrayRef sizes, ScalarType dtype, Device device) {
  const std::int64_t numel = checked_contiguous_numel(sizes, element_size(dtype));  // meta too, as in PyTorch
  // With elements, every stride is at most numel; without, the strides may still overflow ([0, 2^40, 2^40]).
  if (numel == 0) contiguous_strides(sizes);
  return make_checked(sizes, numel, dtype, device);
}

// `source` has numel() elements of these sizes, so their product is known to fit: only the byte
// count in the new dtype is checked. An empty source takes the full check (its strides may not fit).
IntrusivePtr<TensorImpl> TensorImpl::make_contiguous_like(const TensorImpl& source, ScalarType dtype, Device device) {
  const std::int64_t numel = source.numel_;
  if (numel == 0 || contiguous_bytes_overflow(static_cast<std::uint64_t>(numel), element_size(dtype))) [[unlikely]]
    return make_contiguous(source.sizes(), dtype, device);  // its checks, and its error
  return make_checked(source.sizes(), numel, dtype, device);
}

[[gnu::always_inline]] inline IntrusivePtr<TensorImpl> TensorImpl::make_checked(IntArrayRef sizes, std::int64_t numel,
                                                                               ScalarType dtype, Device device) {
  constexpr std::size_t meta_offset = (sizeof(TensorImpl) + alignof(AutogradMeta) - 1) / alignof(AutogradMeta) * alignof(AutogradMeta);
  constexpr std::size_t prefix_bytes = meta_offset + sizeof(AutogradMeta);
  void* place = nullptr;
  Storage storage = device == Device::CPU
                        ? StorageImpl::allocate_with_prefix(prefix_bytes, static_cast<std::size_t>(numel) * element_size(dtype), &place)
                        : StorageImpl::allocate_without_data(prefix_bytes, &place);  // meta: a version counter only
  auto* impl = new (place) TensorImpl(std::move(storage), sizes, Contiguous{numel}, dtype, device);
  impl->inside_storage_block_ = true;
  impl->meta_room_ = static_cast<char*>(place) + meta_offset;
  return IntrusivePtr<TensorImpl>::adopt(impl);
}

// TensorImpl is final, so every block is sizeof(TensorImpl): a constant, whose size class the pool
// computes at compile time.
void* TensorImpl::operator new(std::size_t) { return pool::allocate(sizeof(TensorImpl)); }
void TensorImpl::operator delete(void* p, std::size_t) noexcept { pool::deallocate(p, sizeof(TensorImpl)); }

void TensorImpl::destroy(TensorImpl* self) noexcept {
  if (!self->inside_storage_block_) {
    delete self;
    return;
  }
  Storage block_owner = std::move(self->storage_);
  self->~TensorImpl();
}  // block_owner releases the storage (and the block, if this was the last reference) here

void TensorImpl::clear_autograd_meta() {
  if (!autograd_meta_) return;
  destroy_autograd_meta();
  refresh_autograd_key();
}

// What a dying tensor does (its key set no longer matters), and clear_autograd_meta.
void TensorImpl::destroy_autograd_meta() noexcept {
  autograd_meta_->~AutogradMeta();
  if (autograd_meta_ != meta_room_) pool::deallocate(autograd_meta_, sizeof(AutogradMeta));
  autograd_meta_ = nullptr;
}

// Note [Every view of a float tensor is tracked], core/autograd_meta.h.
void detail::track_view_in_grad_mode(const TensorImpl& source, TensorImpl& view) {
  AutogradMeta& meta = view.ensure_autograd_meta();  // a fresh view: no state yet
  const AutogradMeta* from = source.autograd_meta();
  meta.view.base = from && from->is_view() ? from->view.base : Tensor(IntrusivePtr<TensorImpl>(const_cast<TensorImpl*>(&source)));
  meta.view.version = view.version();
}

// Dropping the payload of a tensor without storage keeps its Python key (Note [A view keeps its
// source's keys]).
std::uint32_t TensorImpl::version_without_storage() const { return subclass_ ? subclass_->version() : 0; }
void TensorImpl::bump_version_without_storage() const {
  if (subclass_) subclass_->bump_version();
}

void TensorImpl::set_reported_device(Device device) {
  STRATA_INTERNAL_ASSERT(key_set_.has(DispatchKey::Meta) && !has_data(),
                         "only a tensor whose kernels are the meta functions may report another device");
  device_ = device;
}

void TensorImpl::set_subclass(IntrusivePtr<TensorSubclass> subclass) {
  subclass_ = std::move(subclass);
  if (subclass_) key_set_ = key_set_.add(DispatchKey::Python);
  else if (storage_) key_set_ = key_set_.remove(DispatchKey::Python);
}

}  // namespace strata
