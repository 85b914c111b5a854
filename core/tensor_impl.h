// core/tensor_impl.h: what a Tensor handle points to: storage, geometry (sizes, strides, offset),
// dtype, device and dispatch keys, plus optional autograd state and an optional wrapper-subclass
// payload. Views are separate TensorImpls sharing one storage. No op logic lives here.
#pragma once

#include <cstdint>

#include "device.h"
#include "dispatch/dispatch_key.h"
#include "dtype.h"
#include "util/intrusive_ptr.h"
#include "shape.h"
#include "sizes_and_strides.h"
#include "storage.h"

namespace strata {

struct AutogradMeta;
class TensorSubclass;
class TensorImpl;

// Note [An undefined tensor points at a sentinel]
// Tensor() is PyTorch's undefined tensor, and as in LibTorch its handle points at one shared
// TensorImpl, `undefined_tensor_impl`, never at null (c10's UndefinedTensorImpl::singleton()). So
// a metadata accessor on it reads fields instead of dereferencing null, with no branch: LibTorch's
// answers fall out of the sentinel's fields, which are c10's defaults (dim() 1, sizes() [0], numel()
// 0, storage_offset() 0, is_contiguous() true; no storage, autograd state or subclass), and its key
// set is empty, so dispatch never picks a kernel for it. Where LibTorch raises (strides(), stride(d),
// device(); dtype(), whose Undefined strata has no name for), the accessor tests for the sentinel: one
// compare of the handle with a constant address, off the path of the kernels, which read a defined
// tensor's TensorImpl. defined() is that compare.
// An empty IntrusivePtr<TensorImpl> holds the sentinel (IntrusiveNull below) and never counts
// references on it. Nothing writes to the sentinel: every function that changes a tensor's state
// refuses an undefined one first (Note [An undefined tensor answers or refuses]).
namespace detail {
extern TensorImpl undefined_tensor_impl;
}
template <>
struct IntrusiveNull<TensorImpl> {
  static constexpr TensorImpl* singleton() noexcept { return &detail::undefined_tensor_impl; }
};

// Note [A view keeps its source's keys]
// A view carries its source's dispatch keys but Autograd (autograd adds that back when it records
// the view), as PyTorch's views (alias_with_sizes_and_strides) and shallow_copy_and_detach copy the
// source's key set. For a plain tensor that is its backend key. A wrapper's view taken below the
// interposer (a handler that excluded the Python key and ran `t`, `view`, `detach`... on the wrapper
// itself, not its inner tensor) is a CPU tensor without storage that keeps the Python key but not
// the subclass payload, as in PyTorch, where such a view has no Python object of the subclass. So:
//  - it never takes the unboxed fast path (runs_cpu_only sees Python in its keys);
//  - the interposer finds no mode or subclass for it and redispatches to the backend;
//  - the boxed CPU kernels refuse it (ops/boxing.h, check_cpu_inputs), and so do data_ptr, raw_data,
//    item and to_vector, in PyTorch's words: "Cannot access data pointer of Tensor that doesn't
//    have storage"; printing shows its metadata (core/tensor_format.cpp).
// Invariant: a CPU tensor without storage carries the Python key (make_wrapper_tensor gives it one,
// views keep it), so code that chooses the fast path from keys alone never reads null data. (A fake
// reports cpu but has the Meta key, not CPU: Note [A meta tensor may report another device].) The cost
// is a load and a mask in each view constructor.

class TensorImpl final : public RefCounted<TensorImpl> {
 public:
  // `storage` is null for wrapper subclasses and has no data for meta tensors.
  // `sizes` and `strides` are copied into the impl's own geometry.
  TensorImpl(Storage storage, std::int64_t storage_offset, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
             Device device);
  // A contiguous tensor of `sizes` (already checked non-negative, with `numel` their product and
  // strides that fit int64, by make_contiguous). The strides are computed in place.
  struct Contiguous {
    std::int64_t numel;
  };
  // A tensor without storage (a wrapper) of `sizes` and `strides` at offset 0, whose element count and
  // contiguity its maker already knows (Note [A wrapper of checked geometry],
  // core/interpose/checked_wrapper.h).
  struct KnownLayout {
    std::int64_t numel;
    bool contiguous;
  };
  TensorImpl(IntArrayRef sizes, IntArrayRef strides, KnownLayout layout, ScalarType dtype, Device device);
  // Both are inline, defined in tensor_impl.cpp: only make_contiguous and destroy call them.
  inline TensorImpl(Storage&& storage, IntArrayRef sizes, Contiguous geometry, ScalarType dtype, Device device);
  // A view with `source`'s storage and geometry (detach): its numel and contiguity are copied, not
  // recomputed. No autograd state, subclass or version of its own is taken from `source`; its keys are
  // view_keys(source).
  static IntrusivePtr<TensorImpl> make_alias(const TensorImpl& source);
  // A view with `source`'s storage and geometry but dimensions `dim0` and `dim1` (in range) swapped.
  static IntrusivePtr<TensorImpl> make_transposed(const TensorImpl& source, std::size_t dim0, std::size_t dim1);
  // A view with `source`'s storage and offset and the same elements in the same order, laid out by
  // `sizes` (whose product is source's numel) and `strides` (from view_strides): view's output. Its
  // numel is copied, and its contiguity too when source is contiguous (Note [A view's contiguity]).
  static IntrusivePtr<TensorImpl> make_reshaped(const TensorImpl& source, IntArrayRef sizes, IntArrayRef strides);
  // A view with `source`'s storage, dtype and device and any geometry (as_strided, expand, ...).
  static IntrusivePtr<TensorImpl> make_view(const TensorImpl& source, std::int64_t storage_offset, IntArrayRef sizes,
                                            IntArrayRef strides);
  // The keys every view above carries (Note [A view keeps its source's keys]).
  static DispatchKeySet view_keys(const TensorImpl& source) {
    return source.key_set_ - DispatchKeySet(DispatchKey::Autograd);
  }
  inline ~TensorImpl();
  // The sentinel's constructor (Note [An undefined tensor points at a sentinel]); constant
  // initialisation, so the sentinel is usable before any other static is constructed.
  struct Undefined {};
  constexpr explicit TensorImpl(Undefined);  // defined in tensor_impl.cpp, its one user

  // A fresh, uninitialised, contiguous tensor. On the CPU its TensorImpl, storage header and data
  // are one allocation (Note [One allocation per fresh tensor]).
  static IntrusivePtr<TensorImpl> make_contiguous(IntArrayRef sizes, ScalarType dtype, Device device);
  // The same with `source`'s sizes (most pointwise outputs), skipping the checks its numel answers.
  static IntrusivePtr<TensorImpl> make_contiguous_like(const TensorImpl& source, ScalarType dtype, Device device);
  static void destroy(TensorImpl* self) noexcept;

  // Views and other separately allocated impls come from the small-object pool.
  static void* operator new(std::size_t bytes);
  static void operator delete(void* p, std::size_t bytes) noexcept;
  static void* operator new(std::size_t, void* place) noexcept { return place; }
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  IntArrayRef sizes() const { return geometry_.sizes(); }
  IntArrayRef strides() const { return geometry_.strides(); }
  std::int64_t dim() const { return static_cast<std::int64_t>(geometry_.size()); }
  const SizesAndStrides& sizes_and_strides() const { return geometry_; }
  std::int64_t numel() const { return numel_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  // Note [A meta tensor may report another device]
  // Kernels are chosen by dispatch keys, never by device(): a tensor whose backend key is Meta runs
  // the meta functions whatever device it reports. A fake tensor (modes/fake_tensor.h) is exactly
  // that, as upstream's FakeTensor is a meta tensor that reports its fake_device: one TensorImpl,
  // with a meta storage (which counts its versions) and no data. Its views copy the device it reports
  // along with its keys. Only a tensor with the Meta backend key may report another device. Unlike
  // upstream's, whose fake reads as meta inside its kernels, a Meta kernel sees the reported device:
  // strata's allocate on the meta device explicitly (Note [Meta kernels read and write no data],
  // ops/boxing.h).
  void set_reported_device(Device device);
  std::int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return is_contiguous_; }
  const Storage& storage() const { return storage_; }
  // Whether the tensor has bytes to read: a CPU tensor. A meta tensor's storage holds only its
  // version counter (Note [Version counters live in the storage]); a wrapper has no storage.
  bool has_data() const { return data_ != nullptr; }  // set exactly when the storage has data
  DispatchKeySet key_set() const { return key_set_; }
  // A 0-d tensor made from a C++ number (PyTorch's wrapped number): type promotion gives it the
  // lowest priority, so `t * 2.5` keeps t's dtype. See ops/native/type_promotion.h.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool wrapped) { is_wrapped_number_ = wrapped; }
  // In-place writes so far to this tensor's storage (Note [Version counters live in the storage]);
  // a wrapper's are counted by its subclass payload (Note [A wrapper's version counter],
  // core/interpose/interposer.h).
  std::uint32_t version() const { return storage_ ? storage_->version() : version_without_storage(); }
  // Made under InferenceMode, or a view of such a tensor (Note [Inference tensors], core/inference_mode.h).
  bool is_inference() const { return storage_ && storage_->is_inference(); }
  void bump_version() const {
    if (storage_) storage_->bump_version();
    else bump_version_without_storage();
  }

  // First element's address; null without data (meta, wrapper). Computed once: a
  // storage's data never moves and a TensorImpl's offset never changes.
  void* data() const { return data_; }

  // Autograd state (see core/autograd_meta.h). requires_grad() is true for leaves that require grad
  // and for tensors with a grad_fn; exactly those carry the Autograd key (Note [Dispatch keys]).
  AutogradMeta* autograd_meta() const { return autograd_meta_; }
  // Makes the meta on first use. Inline, defined in core/autograd_meta.h (include it to call this):
  // every recorded op makes one for each output.
  AutogradMeta& ensure_autograd_meta();
  void clear_autograd_meta();
  bool requires_grad() const { return key_set_.has(DispatchKey::Autograd); }
  // Recomputes the Autograd key from the autograd state; autograd calls it after changing that state.
  // Inline, defined in core/autograd_meta.h, as every recorded op calls it for each output.
  void refresh_autograd_key();

  // A view made while grad mode was off, or a view of one: an in-place op through it that autograd
  // would record is refused (Note [Every view of a float tensor is tracked], core/autograd_meta.h).
  bool is_no_grad_view() const { return no_grad_view_; }
  void set_no_grad_view() { no_grad_view_ = true; }
  // Marks this tensor a no_grad view of `source` (set_no_grad_view). A view of a source that requires
  // grad requires grad through its base, as PyTorch's does: it keeps the Autograd key without a meta
  // (Note [A no_grad view of a tensor that requires grad], core/autograd_meta.h).
  void set_no_grad_view_of(const TensorImpl& source) {
    no_grad_view_ = true;
    if (source.requires_grad()) {
      no_grad_view_requires_grad_ = true;
      key_set_ = key_set_.add(DispatchKey::Autograd);
    }
  }

  // Wrapper subclass payload (core/interpose/interposer.h); setting one adds the Python key, and clearing it
  // removes the key from a tensor with storage only.
  TensorSubclass* subclass() const { return subclass_.get(); }
  void set_subclass(IntrusivePtr<TensorSubclass> subclass);

 private:
  // make_alias's and make_transposed's copy of `source`. Both inline, defined in tensor_impl.cpp.
  struct Alias {};
  inline TensorImpl(const TensorImpl& source, Alias);
  inline TensorImpl(const TensorImpl& source, IntArrayRef sizes, IntArrayRef strides);  // make_reshaped's
  static inline IntrusivePtr<TensorImpl> alias_of(const TensorImpl& source);
  // make_contiguous once `sizes` are known valid, with `numel` elements whose bytes fit int64.
  static IntrusivePtr<TensorImpl> make_checked(IntArrayRef sizes, std::int64_t numel, ScalarType dtype, Device device);
  void destroy_autograd_meta() noexcept;  // autograd_meta_ must be set
  std::uint32_t version_without_storage() const;
  void bump_version_without_storage() const;

  Storage storage_;
  void* data_ = nullptr;
  std::int64_t storage_offset_;
  SizesAndStrides geometry_;  // Note [Sizes and strides share one buffer]
  std::int64_t numel_;
  ScalarType dtype_;
  Device device_;
  bool is_contiguous_;
  bool no_grad_view_ = false;
  bool no_grad_view_requires_grad_ = false;  // set_no_grad_view_of a source that required grad
  DispatchKeySet key_set_;
  AutogradMeta* autograd_meta_ = nullptr;  // owned: in meta_room_ if there is one, else on the heap
  void* meta_room_ = nullptr;              // space for an AutogradMeta in the storage block, if any
  IntrusivePtr<TensorSubclass> subclass_;
  bool is_wrapped_number_ = false;
  bool inside_storage_block_ = false;      // placed in its storage's allocation by make_contiguous
};

}  // namespace strata
