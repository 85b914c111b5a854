// core/small_object_pool.h: a per-thread cache of freed small blocks (TensorImpls, fresh tensors'
// storage blocks, boxed int lists, autograd nodes), by 64-byte size class up to 1 KiB. A tiny op
// allocates and frees a few such blocks; taking them from a thread-local list instead of malloc/free
// saves about 80 instructions a pair. Blocks freed on another thread go to that thread's cache. Under
// AddressSanitizer the pool is off, so use-after-free is still caught.
#pragma once

#include <cstddef>

namespace strata::pool {

// Memory for `bytes` bytes, 16-byte aligned (like operator new).
void* allocate(std::size_t bytes);
// Returns memory from allocate(bytes), with the same `bytes`.
void deallocate(void* p, std::size_t bytes) noexcept;

}  // namespace strata::pool
