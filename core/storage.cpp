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
}  // namespace

IntrusivePtr<StorageImpl> StorageImpl::allocate(std::size_t nbytes) {
  void* unused = nullptr;
  return allocate_with_prefix(0, nbytes, &unused);
}

IntrusivePtr<StorageImpl> StorageImpl::allocate_with_prefix(std::size_t prefix_bytes, std::size_t nbytes, void** prefix) {
  STRATA_CHECK(nbytes < (std::size_t{1} << 46), "storage of ", nbytes, " bytes is too large");
  const std::size_t prefix_room = (prefix_bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  const std::size_t block_bytes = kStorageAlignment + kHeaderBytes + prefix_room + nbytes;
  void* block = pool::allocate(block_bytes);
  void* header = align_up(block);
  *prefix = static_cast<char*>(header) + kHeaderBytes;
  void* data = static_cast<char*>(*prefix) + prefix_room;
  auto* storage = new (header) StorageImpl(block, data, nbytes, nullptr, nullptr);
  storage->block_bytes_ = block_bytes;
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
