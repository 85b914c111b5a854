// core/storage.cpp: storage allocation. Header and data share one block so a new tensor's data costs
// one allocation. Plain operator new plus manual alignment is used because glibc's aligned allocation
// path is several times slower than its small-size fast path, and tiny tensors are the hot case.
#include "core/storage.h"

#include <cstdint>
#include <new>

#include "core/error.h"
#include "core/small_object_pool.h"

namespace strata {

namespace {
constexpr std::size_t kHeaderBytes =
    (sizeof(StorageImpl) + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;

void* align_up(void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<void*>((address + kStorageAlignment - 1) & ~(kStorageAlignment - 1));
}

// Note [Allocation failure is an Error]
// Asking for more memory than the machine has (torch.empty(2**47)) must raise PyTorch's
// "DefaultCPUAllocator: can't allocate memory" error, not end the process. Blocks over 64 MiB come from
// nothrow operator new and a null result is checked: unlike catching std::bad_alloc, that also holds
// under AddressSanitizer, whose throwing operator new aborts on failure (its nothrow one returns null
// when allocator_may_return_null=1, which the overflow tests set). Smaller blocks go through the pool
// (which recycles them, Note [Large blocks are recycled]), where a failure can only be std::bad_alloc,
// caught here.
constexpr std::size_t kPooledBlockLimit = std::size_t{64} << 20;

void* allocate_pooled(std::size_t bytes) {
  try {
    return pool::allocate(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
}  // namespace

IntrusivePtr<StorageImpl> StorageImpl::allocate(std::size_t nbytes) {
  void* unused = nullptr;
  return allocate_with_prefix(0, nbytes, &unused);
}

IntrusivePtr<StorageImpl> StorageImpl::allocate_with_prefix(std::size_t prefix_bytes, std::size_t nbytes, void** prefix) {
  const std::size_t prefix_room = (prefix_bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  std::size_t block_bytes = 0;
  const bool overflow = __builtin_add_overflow(kStorageAlignment + kHeaderBytes + prefix_room, nbytes, &block_bytes);
  const bool pooled = block_bytes <= kPooledBlockLimit;
  void* block = overflow ? nullptr : pooled ? allocate_pooled(block_bytes) : ::operator new(block_bytes, std::nothrow);
  STRATA_CHECK(block, "DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
               " bytes. Error code 12 (Cannot allocate memory)");
  void* header = align_up(block);
  *prefix = static_cast<char*>(header) + kHeaderBytes;
  void* data = static_cast<char*>(*prefix) + prefix_room;
  auto* storage = new (header) StorageImpl(block, data, nbytes, nullptr, nullptr);
  storage->block_bytes_ = pooled ? block_bytes : 0;  // 0: freed with plain operator delete
  return IntrusivePtr<StorageImpl>::adopt(storage);
}

IntrusivePtr<StorageImpl> StorageImpl::wrap(void* data, std::size_t nbytes, Deleter deleter,
                                            void* context) {
  void* block = ::operator new(sizeof(StorageImpl));
  return IntrusivePtr<StorageImpl>::adopt(new (block) StorageImpl(block, data, nbytes, deleter, context));
}

void StorageImpl::destroy(StorageImpl* self) noexcept {
  if (self->deleter_) self->deleter_(self->data_, self->context_);
  void* block = self->block_;
  const std::size_t bytes = self->block_bytes_;
  self->~StorageImpl();
  if (bytes) pool::deallocate(block, bytes);
  else ::operator delete(block);
}

}  // namespace strata
