// core/storage.h: the bytes behind tensors. Views share one StorageImpl; its data is 64-byte aligned.
// A fresh storage is one allocation (header and data together). External memory (e.g. mmap'd weights)
// is wrapped with a deleter. A meta tensor's storage has no data (it counts versions); wrapper tensors
// have no storage at all.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "util/checked_math.h"
#include "inference_mode.h"
#include "util/intrusive_ptr.h"
#include "util/small_object_pool.h"

namespace strata {

inline constexpr std::size_t kStorageAlignment = 64;

class StorageImpl : public RefCounted<StorageImpl> {
 public:
  using Deleter = void (*)(void* data, void* context);

  // Allocates `nbytes` of uninitialised, 64-byte aligned memory.
  static IntrusivePtr<StorageImpl> allocate(std::size_t nbytes);
  // The same, with `prefix_bytes` of extra room in the same block (64-byte aligned, before the data),
  // returned in *prefix: a fresh tensor puts its TensorImpl there, so it costs one allocation.
  // Inline, as every fresh tensor calls it.
  static IntrusivePtr<StorageImpl> allocate_with_prefix(std::size_t prefix_bytes, std::size_t nbytes, void** prefix);
  // The same without data: a meta tensor's storage, which only counts versions.
  static IntrusivePtr<StorageImpl> allocate_without_data(std::size_t prefix_bytes, void** prefix);
  // Wraps memory strata does not own; `deleter(data, context)` runs when the last view goes away.
  static IntrusivePtr<StorageImpl> wrap(void* data, std::size_t nbytes, Deleter deleter, void* context);
  static void destroy(StorageImpl* self) noexcept;  // inline: every fresh tensor's last release

  void* data() const noexcept { return data_; }  // null for a meta tensor's storage
  std::size_t nbytes() const noexcept { return nbytes_; }

  // Note [Version counters live in the storage]
  // Every in-place kernel bumps the version of the storage it writes; autograd records the version
  // of each tensor it saves and refuses to use it in backward if it changed (PyTorch's "modified by
  // an inplace operation" error). PyTorch keeps one counter per family of views (a tensor, its views
  // and its detach()es); in strata exactly those share a storage, so the storage holds the counter
  // and views need no extra bookkeeping. A meta tensor has a storage without data for this reason
  // alone, as PyTorch's meta tensors have one: an in-place op on a meta tensor bumps the version its
  // views and saved copies see, so autograd's "modified by an inplace operation" check holds on meta
  // and fake tensors too (and a graph a write made unusable can be told apart). Wrapper subclasses keep
  // theirs in their payload (Note [A wrapper's version counter], core/interpose/interposer.h).
  // The counter is atomic, as PyTorch's VariableVersion is: threads may write disjoint parts of one
  // storage in place at once (two views, or a leaf's gradient that backward passes on two threads
  // accumulate into), and no bump may be lost, nor may a read race with a bump. Relaxed order is
  // enough: the counter orders nothing else. A thread that may read the written data at all must
  // already be ordered after the write (else reading the data is the race), and the bump is sequenced
  // before the kernel returns, so that thread sees the bump too (read-after-write coherence). Relaxed
  // reads are plain loads; a bump is one locked add. Every access after construction goes through
  // std::atomic_ref; the field itself is a plain integer so that a fresh storage's header is still
  // initialised with plain stores, which the compiler merges.
  std::uint32_t version() const noexcept { return std::atomic_ref<std::uint32_t>(version_).load(std::memory_order_relaxed); }
  void bump_version() {
    if (inference_) [[unlikely]] return check_inference_write();
    std::atomic_ref<std::uint32_t>(version_).fetch_add(1, std::memory_order_relaxed);
  }
  // Made under InferenceMode: its tensors are inference tensors (Note [Inference tensors]).
  bool is_inference() const noexcept { return inference_; }

 private:
  StorageImpl(void* block, void* data, std::size_t nbytes, Deleter deleter, void* context)
      : block_(block), inference_(is_inference_mode_enabled()), data_(data), nbytes_(nbytes), deleter_(deleter), context_(context) {}
  ~StorageImpl() = default;

  static constexpr std::size_t kPooledBlockLimit = pool::detail::kLargeBytes;
  // A block of `block_bytes`: from the pool up to kPooledBlockLimit, else operator new;
  // null when the memory is not there (Note [Allocation failure is an Error]).
  static void* allocate_block(std::size_t block_bytes);
  [[noreturn]] static void throw_allocation_failure(std::size_t nbytes);
  // An inference storage counts no versions; writing one is an error outside InferenceMode.
  static void check_inference_write();

  void* block_;  // the allocation holding this header (and the data, for allocate())
  std::size_t block_bytes_ = 0;  // its size, for the small-object pool (0: a plain operator new block)
  mutable std::uint32_t version_ = 0;  // accessed atomically: Note [Version counters live in the storage]
  bool inference_;
  void* data_;
  std::size_t nbytes_;
  Deleter deleter_;  // null for memory allocated together with this header
  void* context_;
};

using Storage = IntrusivePtr<StorageImpl>;

inline IntrusivePtr<StorageImpl> StorageImpl::allocate_with_prefix(std::size_t prefix_bytes, std::size_t nbytes,
                                                                   void** prefix) {
  constexpr std::size_t kHeaderBytes = (sizeof(StorageImpl) + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  const std::size_t prefix_room = (prefix_bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  std::uint64_t block_bytes = 0;
  const bool overflow = add_overflows(std::uint64_t{kStorageAlignment + kHeaderBytes + prefix_room}, nbytes, &block_bytes);
  void* block = nullptr;
  if (!overflow) [[likely]] {
    block = pool::take_cached(block_bytes);                        // the common case, inline
    if (!block) [[unlikely]] block = allocate_block(block_bytes);  // a miss, a large block, or no pool
  }
  if (!block) [[unlikely]] throw_allocation_failure(nbytes);
  // The header starts at the block's first 64-byte boundary.
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(block);
  char* header = reinterpret_cast<char*>((address + kStorageAlignment - 1) & ~(kStorageAlignment - 1));
  *prefix = header + kHeaderBytes;
  auto* storage = new (header) StorageImpl(block, header + kHeaderBytes + prefix_room, nbytes, nullptr, nullptr);
  storage->block_bytes_ = block_bytes <= kPooledBlockLimit ? block_bytes : 0;  // 0: freed with plain operator delete
  return IntrusivePtr<StorageImpl>::adopt(storage);
}

inline void StorageImpl::destroy(StorageImpl* self) noexcept {
  if (self->deleter_) self->deleter_(self->data_, self->context_);
  void* block = self->block_;
  const std::size_t bytes = self->block_bytes_;
  self->~StorageImpl();
  if (bytes) pool::deallocate(block, bytes);
  else ::operator delete(block);
}

}  // namespace strata
