// core/storage.cpp: storage allocation. Header and data share one block so a new tensor's data costs
// one allocation. Plain operator new plus manual alignment is used because glibc's aligned allocation
// path is several times slower than its small-size fast path, and tiny tensors are the hot case.
#include "core/storage.h"

#include <cstdint>
#include <new>

#include "core/util/error.h"
#include "core/util/small_object_pool.h"

namespace strata {

// Note [Allocation failure is an Error]
// Asking for more memory than the machine has (torch.empty(2**47)) must raise PyTorch's
// "DefaultCPUAllocator: can't allocate memory" error, not end the process. Blocks over 256 MiB come from
// nothrow operator new and a null result is checked: unlike catching std::bad_alloc, that also holds
// under AddressSanitizer, whose throwing operator new aborts on failure (its nothrow one returns null
// when allocator_may_return_null=1, which the overflow tests set). Smaller blocks go through the pool
// (which recycles them, Note [Large blocks are recycled]), where a failure can only be std::bad_alloc,
// caught here.
void* StorageImpl::allocate_block(std::size_t block_bytes) {
  // Without the pool (under AddressSanitizer) every block takes the nothrow path.
  if (block_bytes > kPooledBlockLimit || !pool::detail::kPoolEnabled) return ::operator new(block_bytes, std::nothrow);
  try {
    return pool::allocate(block_bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void StorageImpl::throw_allocation_failure(std::size_t nbytes) {
  detail::throw_error(detail::str_cat("DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                                      " bytes. Error code 12 (Cannot allocate memory)"));
}

void StorageImpl::check_inference_write() {
  STRATA_CHECK(is_inference_mode_enabled(),
               "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
               "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
}

IntrusivePtr<StorageImpl> StorageImpl::allocate(std::size_t nbytes) {
  void* unused = nullptr;
  return allocate_with_prefix(0, nbytes, &unused);
}

IntrusivePtr<StorageImpl> StorageImpl::allocate_without_data(std::size_t prefix_bytes, void** prefix) {
  IntrusivePtr<StorageImpl> storage = allocate_with_prefix(prefix_bytes, 0, prefix);
  storage->data_ = nullptr;
  return storage;
}

IntrusivePtr<StorageImpl> StorageImpl::wrap(void* data, std::size_t nbytes, Deleter deleter,
                                            void* context) {
  void* block = ::operator new(sizeof(StorageImpl));
  return IntrusivePtr<StorageImpl>::adopt(new (block) StorageImpl(block, data, nbytes, deleter, context));
}

}  // namespace strata
